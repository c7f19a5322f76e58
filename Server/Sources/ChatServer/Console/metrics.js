// Reading chatd's /metrics (Prometheus text) and turning two scrapes into rates and latencies.

/** Each sample as `{name, labels, value}`. */
export function parse(text) {
    const samples = [];
    for (const line of text.split("\n")) {
        if (line === "" || line.startsWith("#")) continue;
        const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$/.exec(line);
        if (!match) continue;
        const labels = {};
        for (const pair of (match[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
            labels[pair[1]] = pair[2].replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
        }
        samples.push({ name: match[1], labels, value: Number(match[4]) });
    }
    return samples;
}

const sum = (samples, name, where = () => true) =>
    samples.filter((s) => s.name === name && where(s.labels)).reduce((total, s) => total + s.value, 0);

const gauge = (samples, name) => {
    const found = samples.find((s) => s.name === name);
    return found ? found.value : null;
};

/** A histogram's cumulative bucket counts by upper bound, summed over every label set. */
function buckets(samples, name) {
    const byBound = new Map();
    for (const s of samples) {
        if (s.name !== `${name}_bucket`) continue;
        const bound = s.labels.le === "+Inf" ? Infinity : Number(s.labels.le);
        byBound.set(bound, (byBound.get(bound) ?? 0) + s.value);
    }
    return byBound;
}

/**
 * The `q` quantile of what a histogram counted between two scrapes: the upper bound of the
 * bucket it falls in (the largest finite bound when it is past them all), null if nothing.
 */
export function quantile(q, before, after, name) {
    const early = buckets(before, name);
    const late = [...buckets(after, name)].sort((a, b) => a[0] - b[0]);
    const total = late.length === 0 ? 0 : late[late.length - 1][1] - (early.get(Infinity) ?? 0);
    if (total <= 0) return null;
    const finite = late.filter(([bound]) => Number.isFinite(bound));
    for (const [bound, count] of finite) {
        if (count - (early.get(bound) ?? 0) >= q * total) return bound;
    }
    return finite.length ? finite[finite.length - 1][0] : null;
}

/** What the console plots, from a node's two scrapes `seconds` apart. */
export function rates(before, after, seconds) {
    const per = (value) => Math.max(0, value) / seconds;
    const delta = (name, where) => sum(after, name, where) - sum(before, name, where);
    const statusClass = (digit) => (labels) => (labels.status ?? "").startsWith(digit);
    const busy = gauge(after, "chatd_db_connections_busy");
    return {
        sends: per(delta("chatd_changes_committed_total", (labels) => labels.kind === "message.created")),
        requests2xx: per(delta("chatd_http_requests_total", statusClass("2")) + delta("chatd_http_requests_total", statusClass("1")) + delta("chatd_http_requests_total", statusClass("3"))),
        requests4xx: per(delta("chatd_http_requests_total", statusClass("4"))),
        requests5xx: per(delta("chatd_http_requests_total", statusClass("5"))),
        p50: quantile(0.5, before, after, "chatd_http_request_duration_seconds"),
        p99: quantile(0.99, before, after, "chatd_http_request_duration_seconds"),
        sockets: gauge(after, "chatd_realtime_sockets") ?? 0,
        poolBusy: busy,
        poolMax: gauge(after, "chatd_db_connections_max"),
        busConnected: gauge(after, "chatd_bus_connected") === 1,
        busLag: quantile(0.99, before, after, "chatd_bus_lag_seconds"),
    };
}
