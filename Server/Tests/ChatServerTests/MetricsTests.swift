import Foundation
import OfflineChatProtocol
import OfflineChatServerProcess
import OfflineChatWebSocket
import Testing

@testable import ChatServer

/// `GET /metrics`: what a Prometheus server scraping a node reads.
struct MetricsTests {
    /// The lines of an exposition as `series → value` (comments left out).
    static func series(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            values[String(line[..<space])] = value
        }
        return values
    }

    @Test func requestsSendsAndLatencyAreCountedByRoutePattern() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        for index in 0..<3 { try await server.send("m\(index)", from: alice, to: "bob") }
        let mine = try await server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages?limit=5", token: alice)
        #expect(mine.status == 200)
        #expect(try await server.request("GET", "/v1/nowhere/at/all").status == 404)

        let scraped = try await server.request("GET", "/metrics", admin: true)
        #expect(
            scraped.status == 200 && scraped.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = String(decoding: scraped.body, as: UTF8.self)
        let values = Self.series(text)
        #expect(values[#"chatd_http_requests_total{method="POST",route="/v1/messages",status="201"}"#] == 3)
        #expect(
            values[#"chatd_http_requests_total{method="GET",route="/v1/conversations/{id}/messages",status="200"}"#]
                == 1,
            "one series per route pattern, not per conversation")
        #expect(values[#"chatd_http_requests_total{method="GET",route="unmatched",status="404"}"#] == 1)
        #expect(values[#"chatd_http_request_duration_seconds_count{method="POST",route="/v1/messages"}"#] == 3)
        #expect(
            values[#"chatd_http_request_duration_seconds_bucket{method="POST",route="/v1/messages",le="+Inf"}"#] == 3)
        #expect(values[#"chatd_changes_committed_total{kind="message.created"}"#] == 3, "sends")
        #expect(values["chatd_realtime_sockets"] == 0)
        #expect(text.contains("# TYPE chatd_http_request_duration_seconds histogram"))
        if LiveServer.onSQLite {
            #expect(values["chatd_db_connections_max"] == nil, "SQLite has no pool to report")
        } else {
            #expect(values["chatd_db_connections_max"] == 8 && (values["chatd_db_connections_open"] ?? 0) >= 1)
        }
    }

    /// The admin key guards it, as `X-Admin-Key` or as the bearer token Prometheus sends.
    @Test func onlyTheAdminKeyReadsIt() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        #expect(try await server.request("GET", "/metrics").status == 401)
        #expect(try await server.request("GET", "/metrics", token: alice).status == 401)
        #expect(try await server.request("GET", "/metrics", token: LiveServer.adminKey).status == 200)
    }

    /// Requests with made-up methods, one holding a quote and a backslash, as anyone can send
    /// them: they share one series (`other`), so the scrape does not grow with them, and
    /// Prometheus' own parser still reads all of it (3,000 such requests grew it from 28 KB to
    /// 4 MB for good, and the quote made it unreadable).
    @Test func madeUpMethodsNeitherGrowNorBreakTheScrape() async throws {
        let server = try LiveServer()
        func scrape() async throws -> String {
            String(decoding: try await server.request("GET", "/metrics", admin: true).body, as: UTF8.self)
        }
        _ = try await scrape()
        for method in (0..<500).map({ "M\($0)" }) + [#"A"B\C"#, "BREW", "get"] {
            let fd = try Socket.connect(host: "127.0.0.1", port: server.port)
            defer { Socket.close(fd) }
            try Socket.writeAll(fd, Array("\(method) /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            Socket.setTimeout(fd, seconds: 10)
            while !(try Socket.readSome(fd)).isEmpty {}
        }
        let text = try await scrape()
        #expect(text.count < 20_000, "\(text.count) bytes")
        let methods = Set(
            text.split(separator: "\n").compactMap { line in
                line.range(of: #"method="[^"]*""#, options: .regularExpression).map { String(line[$0]) }
            })
        #expect(methods == [#"method="GET""#, #"method="other""#], "\(methods)")
        let parsed = try Self.parseWithPrometheus(text)
        #expect(parsed.status == 0, "\(parsed.output)")
        #expect(parsed.output.contains("chatd_http_requests "), "\(parsed.output)")
    }

    /// `Python/parse_metrics.py` on `text`: its exit status and what it printed.
    static func parseWithPrometheus(_ text: String) throws -> (status: Int32, output: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Python/parse_metrics.py")
        let process = Process()
        let (input, output) = (Pipe(), Pipe())
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        try input.fileHandleForWriting.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (ServerProcess.waitForExit(process), printed)
    }

    @Test func histogramBucketsAreCumulative() {
        var histogram = Metrics.Histogram(bounds: [0.01, 0.1])
        for seconds in [0.005, 0.05, 0.07, 3] { histogram.observe(seconds) }
        #expect(
            histogram.lines("h", labels: "") == [
                #"h_bucket{le="0.01"} 1"#, #"h_bucket{le="0.1"} 3"#,
                #"h_bucket{le="+Inf"} 4"#, "h_sum 3.125", "h_count 4"
            ])
        #expect(Metrics.escape("a\"b\\c\nd") == #"a\"b\\c\nd"#)
    }
}
