import Foundation
import OfflineChatLocking

/// What `GET /metrics` reports, in Prometheus' text format (version 0.0.4): requests by route
/// and status with latency histograms, committed changes by kind (sends are
/// `message.created`), bus lag, and the gauges read when scraped (sockets, users online,
/// database connections). Counters only grow while the process lives; Prometheus' `rate()`
/// copes with the reset a restart brings.
final class Metrics: Sendable {
    /// Seconds; the buckets a chat request's latency is judged by (1 ms … 2.5 s).
    static let latencyBounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    /// A cumulative histogram of observed seconds.
    struct Histogram: Sendable {
        let bounds: [Double]
        private(set) var counts: [UInt64]
        private(set) var sum = 0.0
        private(set) var count: UInt64 = 0

        init(bounds: [Double] = Metrics.latencyBounds) {
            self.bounds = bounds
            counts = Array(repeating: 0, count: bounds.count)
        }

        mutating func observe(_ seconds: Double) {
            if let index = bounds.firstIndex(where: { seconds <= $0 }) { counts[index] += 1 }
            sum += seconds
            count += 1
        }

        /// `name_bucket{…,le="…"}` lines (cumulative), then `name_sum` and `name_count`.
        func lines(_ name: String, labels: String) -> [String] {
            let prefix = labels.isEmpty ? "" : labels + ","
            var running: UInt64 = 0
            var lines: [String] = []
            for (bound, count) in zip(bounds, counts) {
                running += count
                lines.append("\(name)_bucket{\(prefix)le=\"\(bound)\"} \(running)")
            }
            lines.append("\(name)_bucket{\(prefix)le=\"+Inf\"} \(count)")
            let braces = labels.isEmpty ? "" : "{\(labels)}"
            lines.append("\(name)_sum\(braces) \(sum)")
            lines.append("\(name)_count\(braces) \(count)")
            return lines
        }
    }

    /// A route as its pattern names it (`/v1/messages/{id}`, never a raw path: one series per
    /// route, however many ids), `unmatched` for a path no route knows.
    struct Route: Hashable, Comparable, Sendable {
        let method: String
        let pattern: String

        var labels: String { "method=\"\(Metrics.escape(method))\",route=\"\(Metrics.escape(pattern))\"" }

        static func < (a: Route, b: Route) -> Bool { (a.pattern, a.method) < (b.pattern, b.method) }
    }

    struct RequestKey: Hashable, Sendable {
        let route: Route
        let status: Int
    }

    private struct State {
        var requests: [RequestKey: UInt64] = [:]
        var latency: [Route: Histogram] = [:]
        var changes: [String: UInt64] = [:]
        var busLag = Histogram()
        var busMessages: UInt64 = 0
        var busRefused: UInt64 = 0
    }

    /// Taken by every request of every HTTP thread: a plain lock (`Locked`), never a spinning
    /// `Mutex` (it was 9% of chatd's CPU on a history read under wrk's 16 connections).
    private let state = Locked(State())

    /// The methods counted by name; any other is `other` (a label per made-up method let 3,000
    /// requests grow the scrape from 28 KB to 4 MB for good, and one holding `"` broke it).
    static let countedMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// One answered request. Every label comes from a fixed set: the method (`countedMethods`),
    /// the route's pattern (or `unmatched`) and the status.
    func request(method: String, route: String, status: Int, seconds: Double) {
        let route = Route(method: Self.countedMethods.contains(method) ? method : "other", pattern: route)
        state.withLock { state in
            state.requests[RequestKey(route: route, status: status), default: 0] += 1
            state.latency[route, default: Histogram()].observe(seconds)
        }
    }

    /// Changes committed on this node, by kind.
    func committed(kinds: [String]) {
        guard !kinds.isEmpty else { return }
        state.withLock { state in
            for kind in kinds { state.changes[kind, default: 0] += 1 }
        }
    }

    /// A change that came from another node over the bus, `seconds` after that node published it.
    func busReceived(lag seconds: Double) {
        state.withLock { state in
            state.busMessages += 1
            state.busLag.observe(max(0, seconds))
        }
    }

    /// A bus frame that did not open under the cluster's secret (forged, or a node with another key).
    func busRefused() { state.withLock { $0.busRefused += 1 } }

    /// A value read when scraped.
    struct Gauge {
        let name: String
        let help: String
        let value: Double
    }

    /// The whole exposition: what was counted, then `gauges`.
    func render(gauges: [Gauge]) -> String {
        let state = state.current
        var lines: [String] = []
        lines += [
            "# HELP chatd_http_requests_total HTTP requests answered, by method, route pattern and status.",
            "# TYPE chatd_http_requests_total counter"
        ]
        for (key, count) in state.requests.sorted(by: { ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status) })
        {
            lines.append("chatd_http_requests_total{\(key.route.labels),status=\"\(key.status)\"} \(count)")
        }
        lines += [
            "# HELP chatd_http_request_duration_seconds Time to answer a request (routing to response), by method and route.",
            "# TYPE chatd_http_request_duration_seconds histogram"
        ]
        for (route, histogram) in state.latency.sorted(by: { $0.key < $1.key }) {
            lines += histogram.lines("chatd_http_request_duration_seconds", labels: route.labels)
        }
        lines += [
            "# HELP chatd_changes_committed_total Changes committed through this node, by kind (sends are message.created).",
            "# TYPE chatd_changes_committed_total counter"
        ]
        for (kind, count) in state.changes.sorted(by: { $0.key < $1.key }) {
            lines.append("chatd_changes_committed_total{kind=\"\(Self.escape(kind))\"} \(count)")
        }
        lines += [
            "# HELP chatd_bus_changes_received_total Changes received from other nodes over NATS.",
            "# TYPE chatd_bus_changes_received_total counter",
            "chatd_bus_changes_received_total \(state.busMessages)",
            "# HELP chatd_bus_frames_refused_total Bus frames dropped: not sealed under the cluster's secret.",
            "# TYPE chatd_bus_frames_refused_total counter",
            "chatd_bus_frames_refused_total \(state.busRefused)",
            "# HELP chatd_bus_lag_seconds From another node's publish to this node's receipt (wall clocks).",
            "# TYPE chatd_bus_lag_seconds histogram"
        ]
        lines += state.busLag.lines("chatd_bus_lag_seconds", labels: "")
        for gauge in gauges {
            lines += [
                "# HELP \(gauge.name) \(gauge.help)", "# TYPE \(gauge.name) gauge",
                "\(gauge.name) \(Self.number(gauge.value))"
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// A label value: backslash, quote and newline escaped.
    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
