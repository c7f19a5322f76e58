import ChatServer
import Foundation
import OfflineChatProtocol
import OfflineChatServerProcess
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP answer from chatd.
struct Reply {
    let status: Int
    let body: Data
    let headers: [String: String]

    func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        do { return try JSONDecoder().decode(type, from: body) } catch {
            throw LiveServer.Failure(
                "cannot decode \(T.self) from \(status) \(String(decoding: body, as: UTF8.self)): \(error)")
        }
    }

    /// The JSON error body of a 4xx/5xx answer.
    var error: APIError? { try? JSONDecoder().decode(APIError.self, from: body) }
}

/// The real `chatd` process on an ephemeral loopback port, with a fresh data directory, on
/// the engine the suite runs on: embedded SQLite, or a fresh PostgreSQL database of its own
/// when `CHATD_TEST_POSTGRES` names a server (`make test` runs the suite both ways).
/// (`@unchecked Sendable`: immutable after init; the process is only touched in `stop()`.)
final class LiveServer: ChatdUnderTest, @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static let adminKey = "test-admin-key-of-32-bytes-or-more"
    let process: Process
    let output: Pipe
    /// chatd's standard input, held open while this object lives.
    let lifeline = Pipe()
    let dataDirectory: URL
    let port: Int
    let session: URLSession

    /// `postgres://user@host:port` of the server the suite uses; nil: SQLite.
    static let postgres: String? = ProcessInfo.processInfo.environment["CHATD_TEST_POSTGRES"].flatMap {
        $0.isEmpty ? nil : $0
    }
    /// Tests of SQLite's own files and migrations run only on that engine.
    static var onSQLite: Bool { postgres == nil }

    /// The flags that point chatd at `directory`'s store: on PostgreSQL a database made for
    /// it on first use (its url kept in the directory, so a restart finds the same one).
    static func storeArguments(_ directory: URL) throws -> [String] {
        guard let postgres else { return ["--data", directory.path] }
        let file = directory.appendingPathComponent("test-database-url")
        if let url = try? String(contentsOf: file, encoding: .utf8) {
            return ["--data", directory.path, "--database", url]
        }
        let url = try ServerProcess.createDatabase(on: postgres)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try url.write(to: file, atomically: true, encoding: .utf8)
        return ["--data", directory.path, "--database", url]
    }

    /// Runs a chatd subcommand to its end: its exit status and what it printed.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (ServerProcess.waitForExit(process), text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Where `swift build` put chatd: next to the test bundle.
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chatd")
    }

    /// `sqlite`: on embedded SQLite whatever the suite's engine (the source of an export).
    init(arguments: [String] = [], dataDirectory: URL? = nil, sqlite: Bool = false) throws {
        self.dataDirectory =
            dataDirectory
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("chatd-test-\(UUID().uuidString)")
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw Failure("build chatd first (swift build): \(Self.binary.path) is missing")
        }
        (process, output, port) = try ServerProcess.startChatd(
            Self.binary,
            (sqlite ? ["--data", self.dataDirectory.path] : try Self.storeArguments(self.dataDirectory))
                + ["--port", "0", "--admin-key", Self.adminKey, "--test-clock", "--stop-on-stdin-eof"] + arguments,
            lifeline: lifeline)  // closed when the test process dies: chatd then stops
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.httpMaximumConnectionsPerHost = 64
        session = URLSession(configuration: configuration)
    }

    deinit { stop() }

    /// SIGTERM and wait; returns the exit status.
    @discardableResult
    func stop() -> Int32 { ServerProcess.end(process) }

    /// SIGKILL and wait: the node dies without cleaning up (its sockets, its presence).
    @discardableResult
    func kill() -> Int32 { ServerProcess.end(process, with: SIGKILL) }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func perform(
        _ method: String, _ path: String, token: String?, admin: Bool, body: Data?, headers: [String: String]
    ) async throws -> Reply {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        request.httpBody = body
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if admin { request.setValue(Self.adminKey, forHTTPHeaderField: Endpoints.adminKeyHeader) }
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            fields[String(describing: name).lowercased()] = String(describing: value)
        }
        return Reply(status: http.statusCode, body: data, headers: fields)
    }
}
