// Health at a glance: every node's /v1/health, and charts of /metrics polled every few
// seconds. Behind a proxy each poll may reach another node: counters are compared per node
// (`X-Chatd-Node`) and the rates of the nodes seen lately are added up.
import { health as checkHealth, scrape } from "./api.js";
import { Chart } from "./chart.js";
import { $, el, attempt, fill, time } from "./dom.js";
import { parse, rates } from "./metrics.js";

export const pollSeconds = 2;
/** A node not heard from in this many polls no longer counts. */
const staleAfter = 5;

const nodes = new Map(); // the node that answered /metrics → { samples, at, rates }
const healths = new Map(); // the node that answered /v1/health → { health, at }
let charts = null;
let timer = null;

function makeCharts() {
    const box = $("#charts");
    return {
        sends: new Chart(box, { id: "chart-sends", title: "Sends/s", series: ["sends"] }),
        requests: new Chart(box, { id: "chart-requests", title: "Requests/s", series: ["2xx", "4xx", "5xx"] }),
        latency: new Chart(box, { id: "chart-latency", title: "Latency", series: ["p50", "p99"], unit: " ms" }),
        sockets: new Chart(box, { id: "chart-sockets", title: "Realtime sockets", series: ["sockets"] }),
        pool: new Chart(box, { id: "chart-pool", title: "Database connections busy", series: ["busy", "max"], absent: "no pool (SQLite)" }),
        bus: new Chart(box, { id: "chart-bus", title: "Bus lag p99", series: ["lag"], unit: " ms", absent: "no bus (one node)" }),
    };
}

const total = (values) => (values.every((value) => value === null) ? null : values.reduce((a, b) => a + (b ?? 0), 0));
const highest = (values) => (values.every((value) => value === null) ? null : Math.max(...values.filter((v) => v !== null)));

async function poll() {
    const now = Date.now();
    const [{ node, text }, checked] = await Promise.all([scrape(), checkHealth()]);
    const samples = parse(text);
    const entry = nodes.get(node) ?? {};
    if (entry.samples) entry.rates = rates(entry.samples, samples, Math.max(0.001, (now - entry.at) / 1000));
    Object.assign(entry, { samples, at: now });
    nodes.set(node, entry);
    // Behind a proxy the two requests may reach two nodes: each answer is kept under its own.
    const name = checked.node ?? node;
    healths.set(name, { health: { ...checked.body, node: name }, at: now });

    const live = [...nodes.values()].filter((n) => now - n.at < staleAfter * pollSeconds * 1000 && n.rates);
    const pick = (key) => live.map((n) => n.rates[key]);
    const ms = (seconds) => (seconds === null ? null : seconds * 1000);
    charts.sends.push([total(pick("sends"))]);
    charts.requests.push([total(pick("requests2xx")), total(pick("requests4xx")), total(pick("requests5xx"))]);
    charts.latency.push([ms(highest(pick("p50"))), ms(highest(pick("p99")))]);
    charts.sockets.push([total(pick("sockets"))]);
    charts.pool.push([total(pick("poolBusy")), total(pick("poolMax"))]);
    charts.bus.absent = pick("busConnected").some(Boolean) ? "no traffic between nodes lately" : "no bus (one node)";
    charts.bus.push([ms(highest(pick("busLag")))]);
    showNodes();
}

function showNodes() {
    const names = [...healths.keys()].sort();
    fill($("#node-table tbody"), names.map((name) => healths.get(name)).map(({ health, at }) => el("tr", {},
        el("td", {}, health.node),
        el("td", {}, health.status),
        el("td", {}, health.engine ?? "—"),
        el("td", {}, health.database ?? "—"),
        el("td", {}, health.bus ?? "no bus (one node)"),
        el("td", {}, health.version ?? "—"),
        el("td", {}, time(at)))));
}

/** Starts polling (once); the charts keep filling while another screen is shown. */
export function showHealth() {
    if (timer !== null) return;
    charts ??= makeCharts();
    const tick = () => attempt(poll);
    tick();
    timer = setInterval(tick, pollSeconds * 1000);
}

export function stopHealth() {
    clearInterval(timer);
    timer = null;
}
