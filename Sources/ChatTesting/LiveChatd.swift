#if os(Linux) || os(macOS)  // child processes: not on iOS
import Foundation
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OfflineChat
import OfflineChatServerProcess

/// The real `chatd` as a child process on a loopback port, with a fresh data directory, for
/// tests. `stop()` makes the server unreachable ("offline"); `restart()` brings it back on the
/// same port and data. Build chatd first (`make test` does): the binary is looked up in
/// `$CHATD_BINARY`, else `Server/.build/debug/chatd` of this repository.
public final class LiveChatd: @unchecked Sendable {  // `process` is only replaced in start/stop, by the owning test
    /// chatd could not be started, or answered an admin call with an unexpected status.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// A failure described by `description`.
        public init(_ description: String) { self.description = description }
    }

    /// The admin key the test chatd is started with (`--admin-key`).
    public static let adminKey = "test-admin-key-of-32-bytes-or-more"
    /// The server's data directory (a fresh temporary one; kept across `restart()`).
    public let dataDirectory: URL
    /// The loopback port chatd listens on (the same after `restart()`).
    public private(set) var port: Int = 0
    private var process: Process?
    /// chatd's standard input, held open while this object lives.
    private var lifeline: Pipe?
    private let extraArguments: [String]
    private let session: URLSession

    /// The chatd executable: `$CHATD_BINARY`, else this checkout's `Server/.build/debug/chatd`.
    public static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["CHATD_BINARY"] { return URL(fileURLWithPath: path) }
        return repository.appendingPathComponent("Server/.build/debug/chatd")
    }

    /// The checkout this package was built from.
    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// Starts chatd on a free loopback port with a fresh data directory; `arguments` are
    /// passed on (`--write-rate 0`, …).
    public init(arguments: [String] = []) throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chatd-sdk-test-\(UUID().uuidString)")
        extraArguments = arguments
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        session = URLSession(configuration: configuration)
        try start(port: 0)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    /// `https` when started with `--tls-cert` (its own request helpers then do not work:
    /// URLSession on Linux does not take a private CA; use `admin(_:)`).
    public var url: URL {
        URL(string: "\(extraArguments.contains("--tls-cert") ? "https" : "http")://127.0.0.1:\(port)")!
    }

    /// Runs a `chatd` admin subcommand (`user add UID`, `token UID`, …) on this server's data
    /// directory, beside the running server, and returns what it printed.
    public func admin(_ arguments: [String]) throws -> String {
        let process = Process()
        let output = Pipe()
        process.executableURL = Self.binary
        process.arguments = arguments + ["--data", dataDirectory.path]
        process.standardOutput = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        guard ServerProcess.waitForExit(process) == 0 else {
            throw Failure("chatd \(arguments.joined(separator: " ")) failed")
        }
        return String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func start(port requested: Int) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw Failure("build chatd first (cd Server && swift build): \(Self.binary.path) is missing")
        }
        // The key in the environment, not on the command line (where chatd warns that `ps` shows it).
        // chatd stops when `lifeline` closes: if the test process dies, so does its chatd.
        let lifeline = Pipe()
        let (process, _, port) = try ServerProcess.startChatd(
            Self.binary,
            ["--data", dataDirectory.path, "--port", "\(requested)", "--test-clock", "--stop-on-stdin-eof"]
                + extraArguments,
            environment: ProcessInfo.processInfo.environment.merging(["CHATD_ADMIN_KEY": Self.adminKey]) { $1 },
            lifeline: lifeline)
        self.port = port
        self.process = process
        self.lifeline = lifeline
    }

    /// SIGTERM and wait: the server is now unreachable.
    public func stop() {
        if let process { ServerProcess.end(process) }
        process = nil
    }

    /// SIGKILL and wait: chatd dies mid-whatever, as on a crashed machine (no drain, no
    /// close frames, transactions cut off).
    public func kill() {
        if let process { ServerProcess.end(process, with: SIGKILL) }
        process = nil
    }

    /// Starts chatd again on the same port with the same data.
    public func restart() throws {
        stop()
        try start(port: port)
    }

    /// Creates a user and returns a token for them.
    public func user(_ uid: String, name: String? = nil) async throws -> String {
        var body: [String: String] = ["uid": uid]
        if let name { body["name"] = name }
        let created = try await admin("POST", "/v1/admin/users", body)
        guard created.status == 201 else {
            throw Failure("create \(uid): \(created.status) \(String(decoding: created.data, as: UTF8.self))")
        }
        return try await token(uid)
    }

    /// A fresh token for an existing user.
    public func token(_ uid: String, ttlSeconds: Int64? = nil) async throws -> String {
        let reply = try await admin(
            "POST", "/v1/admin/users/\(uid)/tokens", ttlSeconds.map { ["ttlSeconds": $0] } ?? [String: Int64]())
        guard let object = try JSONSerialization.jsonObject(with: reply.data) as? [String: Any],
            let token = object["authToken"] as? String
        else {
            throw Failure("token for \(uid): \(reply.status)")
        }
        return token
    }

    /// Revokes a token (its sockets close, its requests answer 401).
    public func revoke(_ token: String) async throws {
        let (status, _) = try await admin("POST", Endpoints.adminTokens + "/revoke", RevokeTokenRequest(token: token))
        guard status == 204 else { throw Failure("revoke: \(status)") }
    }

    /// Moves the server's test clock forward.
    public func advanceClock(seconds: Int64) async throws {
        _ = try await admin("POST", "/v1/admin/clock", ["advanceSeconds": seconds])
    }

    /// Any request as a user (with a token) or as the admin (without).
    public func request(
        _ method: String, _ path: String, token: String? = nil,
        json: (some Encodable)? = nil as String?
    ) async throws -> (status: Int, data: Data) {
        var request = URLRequest(url: URL(string: url.absoluteString + path)!)
        request.httpMethod = method
        if let token {
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        } else {
            request.setValue(Self.adminKey, forHTTPHeaderField: "X-Admin-Key")
        }
        if let json {
            request.httpBody = try JSONEncoder().encode(json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        return ((response as! HTTPURLResponse).statusCode, data)
    }

    /// Sends a text message as `token`'s user through chatd's API (not through an SDK client:
    /// the way another person's message arrives); returns its server id.
    @discardableResult
    public func send(
        _ text: String, from token: String, to receiver: String, receiverType: ReceiverType = .user
    ) async throws -> Int64 {
        let (status, data) = try await request(
            "POST", Endpoints.messages, token: token,
            json: SendMessageRequest(
                muid: UUID().uuidString, receiver: receiver, receiverType: receiverType, text: text))
        guard status == 201 else { throw Failure("send: \(status) \(String(decoding: data, as: UTF8.self))") }
        return try JSONDecoder().decode(MessagePayload.self, from: data).id
    }

    /// Uploads `data` to chatd's media store as `token`'s user; the attachment to send.
    public func upload(_ data: Data, name: String, mimeType: String, token: String) async throws -> Attachment {
        var request = URLRequest(url: URL(string: url.absoluteString + Endpoints.media + "?name=\(name)")!)
        request.httpMethod = "POST"
        request.httpBody = data
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue(mimeType, forHTTPHeaderField: "Content-Type")
        let (answer, response) = try await session.data(for: request)
        guard (200..<300).contains((response as! HTTPURLResponse).statusCode) else {
            throw Failure("upload: \(String(decoding: answer, as: UTF8.self))")
        }
        return try JSONDecoder().decode(Attachment.self, from: answer)
    }

    private func admin(
        _ method: String, _ path: String, _ json: (some Encodable)?
    ) async throws -> (status: Int, data: Data) {
        try await request(method, path, json: json)
    }
}
#endif
