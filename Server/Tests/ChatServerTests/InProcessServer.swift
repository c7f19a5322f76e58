import Foundation
import OfflineChatProtocol

@testable import ChatServer

/// chatd's router and store in the test process, without a socket: for tables of statuses and
/// validation answers, where a process and HTTP add only time. The configuration comes from
/// the same arguments `LiveServer` starts chatd with (so PostgreSQL too, under
/// `CHATD_TEST_POSTGRES`). Anything that needs the wire (realtime, body limits, timeouts,
/// shutdown, schemathesis) stays on `LiveServer`.
final class InProcessServer: ChatdUnderTest, Sendable {
    let server: ChatServer
    let dataDirectory: URL

    /// `arguments`: chatd's options beyond the store, the admin key and the test clock.
    init(arguments: [String] = []) throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chatd-inprocess-\(UUID().uuidString)")
        let arguments =
            try LiveServer.storeArguments(dataDirectory) + ["--admin-key", LiveServer.adminKey, "--test-clock"]
            + arguments
        let (_, configuration) = try ChatdArguments.parse(arguments, environment: [:])
        server = try ChatServer(configuration: configuration)
    }

    deinit {
        try? server.stop()
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    func perform(
        _ method: String, _ path: String, token: String?, admin: Bool, body: Data?, headers: [String: String]
    ) async throws -> Reply {
        var fields = Dictionary(uniqueKeysWithValues: headers.map { ($0.key.lowercased(), $0.value) })
        if let token { fields["authorization"] = "Bearer \(token)" }
        if admin { fields[Endpoints.adminKeyHeader.lowercased()] = LiveServer.adminKey }
        if body != nil && fields["content-type"] == nil { fields["content-type"] = "application/json" }
        let (route, query) = Self.split(path)
        let response = server.http.router.respond(
            to: HTTPRequest(method: method, path: route, query: query, headers: fields, body: Array(body ?? Data())))
        let answered = Dictionary(response.headers.map { ($0.0.lowercased(), $0.1) }) { _, last in last }
        return Reply(status: response.status, body: Data(response.body), headers: answered)
    }

    /// `path?query` as the percent-decoded path and its decoded arguments. chatd's kept escapes
    /// (`%00`, `%2F`, `%25`: `HTTPRequest.KeptEscapes`) are not modelled; the live tests send them.
    static func split(_ target: String) -> (String, QueryArguments) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query = QueryArguments()
        for pair in (parts.count > 1 ? parts[1] : "").split(separator: "&") {
            let field = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = field.count > 1 ? String(field[1]) : ""
            query.add(
                String(field[0]).removingPercentEncoding ?? String(field[0]), value.removingPercentEncoding ?? value)
        }
        return (String(parts[0]).removingPercentEncoding ?? String(parts[0]), query)
    }
}
