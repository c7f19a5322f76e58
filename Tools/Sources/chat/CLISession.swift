import Foundation
import OfflineChat

/// The SDK as `chat` uses it: one client per run on the data dir, logged in as `--as` with
/// the kept (or given) token. Runs end without logging out, so the cache and the outbox stay.
final class CLISession: Sendable {
    let invocation: Invocation
    let client: ChatClient
    let output: Output
    let events = CLIEvents()

    init(_ invocation: Invocation) throws {
        self.invocation = invocation
        output = Output(json: invocation.json)
        var offline = OfflineConfig()
        offline.enabled = true
        offline.encryption = invocation.encrypt
        var config = ChatConfig(
            appID: invocation.app, server: invocation.server, storageDirectory: invocation.data, offline: offline,
            callbackQueue: DispatchQueue(label: "chat.callbacks"), logger: StandardErrorLogger(minimumLevel: .error))
        config.connectionSettleDelay = 200
        config.requestTimeout = 5
        config.reconnectMaxDelay = 2_000
        client = try ChatClient(config: config)
        events.attach(to: client)
    }

    var uid: String { invocation.uid ?? "" }

    /// `<data>/tokens/<app>.<uid>.token`, 0600 in a 0700 folder.
    var tokenFile: URL {
        invocation.data.appendingPathComponent("tokens", isDirectory: true).appendingPathComponent(
            "\(invocation.app).\(uid).token")
    }

    func keptToken() -> String? {
        (try? String(contentsOf: tokenFile, encoding: .utf8)).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    func keep(token: String) throws {
        let folder = tokenFile.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard
            FileManager.default.createFile(
                atPath: tokenFile.path, contents: Data(token.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw CLIError("cannot write \(tokenFile.path)")
        }
    }

    func forgetToken() { try? FileManager.default.removeItem(at: tokenFile) }

    /// Logs in with `--token` or the kept token. Offline, the SDK serves the same user from
    /// the cache; a token the server rejects is forgotten.
    func login() async throws -> User {
        guard let token = invocation.token ?? keptToken() else {
            throw CLIError(
                "no token for \(uid): run chat --as \(uid) login --token TOKEN (chatd token \(uid) prints one)")
        }
        do {
            return try await client.login(uid: uid, authToken: token)
        } catch let error as ChatException {
            if error.errorCode == ChatException.authTokenInvalid || error.httpStatus == 401 {
                forgetToken()
                throw CLIError(
                    "the server rejected the token for \(uid) (\(error.errorDescription)); run chat login again")
            }
            if error.errorCode == ChatException.internetUnavailable {
                throw CLIError(
                    "cannot reach \(invocation.server.absoluteString) and there is no cached session for \(uid)")
            }
            throw CLIError("login failed: \(error.errorDescription)")
        }
    }

    /// Waits up to `seconds` for the realtime connection's first attempt; false when it
    /// failed (offline) or did not finish in time.
    func connected(within seconds: Double) async -> Bool {
        if client.getConnectionStatus() == .connected { return true }
        return await events.first(of: ["connected", "disconnected"], seconds: seconds) == "connected"
    }
}

/// A failure with a message for people; the run exits 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
