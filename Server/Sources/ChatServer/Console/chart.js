// Small line charts drawn as SVG in the page (no library, nothing fetched).
const svgNS = "http://www.w3.org/2000/svg";
const width = 300;
const height = 100;

function svg(tag, attributes) {
    const node = document.createElementNS(svgNS, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
    return node;
}

/** A number for people: at most three significant digits. */
export const format = (value, unit = "") =>
    value === null || value === undefined ? "—" : `${Number(value.toPrecision(3))}${unit}`;

/**
 * A chart of named series (`series: ["2xx", "4xx"]`) keeping the last `keep` points each.
 * `push(values)` adds a point to every series (null: no value this time) and redraws.
 */
export class Chart {
    constructor(container, { id, title, series, unit = "", keep = 90, absent = "—" }) {
        this.series = series;
        this.absent = absent;
        this.unit = unit;
        this.keep = keep;
        this.points = series.map(() => []);
        this.value = document.createElement("span");
        this.value.className = "value";
        const caption = document.createElement("figcaption");
        const name = document.createElement("span");
        name.textContent = title;
        caption.append(name, this.value);
        this.svg = svg("svg", { viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "none", role: "img" });
        this.title = title;
        this.figure = document.createElement("figure");
        this.figure.id = id;
        this.figure.append(caption, this.svg);
        if (series.length > 1) {
            const legend = document.createElement("div");
            legend.className = "legend";
            series.forEach((label, index) => {
                const item = document.createElement("span");
                item.className = `swatch-${index}`;
                item.textContent = `■ ${label}`;
                legend.append(item);
            });
            this.figure.append(legend);
        }
        container.append(this.figure);
        this.draw();
    }

    push(values) {
        values.forEach((value, index) => {
            this.points[index].push(value);
            if (this.points[index].length > this.keep) this.points[index].shift();
        });
        this.draw();
    }

    /** Each series' latest value (the caption; the figure's `data-latest` and `data-points` for tests). */
    latest() {
        return this.points.map((points) => (points.length ? points[points.length - 1] : null));
    }

    draw() {
        const latest = this.latest();
        const text = latest.every((value) => value === null)
            ? this.absent
            : this.series.length === 1
                ? format(latest[0], this.unit)
                : this.series.map((label, index) => `${label} ${format(latest[index], this.unit)}`).join(" · ");
        this.value.textContent = text;
        this.svg.setAttribute("aria-label", `${this.title}: ${text}`);
        this.figure.dataset.latest = JSON.stringify(latest);
        this.figure.dataset.points = JSON.stringify(this.points);
        const all = this.points.flat().filter((value) => value !== null);
        const top = (all.length === 0 || Math.max(...all) <= 0 ? 1 : Math.max(...all)) * 1.1;
        const children = [svg("line", { class: "axis", x1: 0, y1: height - 1, x2: width, y2: height - 1 })];
        this.points.forEach((points, index) => {
            const step = width / Math.max(1, this.keep - 1);
            const offset = this.keep - points.length;
            let d = "";
            let last = null;
            points.forEach((value, at) => {
                if (value === null) return;
                const x = (offset + at) * step;
                const y = height - 2 - (value / top) * (height - 14);
                d += `${d === "" || points[at - 1] === null ? "M" : "L"}${x.toFixed(1)},${y.toFixed(1)}`;
                last = { x, y };
            });
            if (d !== "") children.push(svg("path", { class: `line series-${index}`, d }));
            // The latest point as a dot: a single point draws no line.
            if (last) children.push(svg("circle", { class: `dot series-${index}`, cx: last.x, cy: last.y, r: 3 }));
        });
        const label = svg("text", { x: 2, y: 10 });
        label.textContent = all.length === 0 ? "" : `max ${format(top / 1.1, this.unit)}`;
        children.push(label);
        this.svg.replaceChildren(...children);
    }
}
