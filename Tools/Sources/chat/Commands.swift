import Foundation
import OfflineChat
import OfflineChatLocking

/// The non-interactive commands. Each returns the run's exit status.
extension CLISession {
    func run() async throws -> Int32 {
        switch invocation.command {
        case .help:
            output.write(Invocation.usage)
            return 0
        case .login: return try await loginCommand()
        case .logout: return try await logoutCommand()
        case .conversations: return try await conversations()
        case .history(let with, let limit, let group): return try await history(with: with, limit: limit, group: group)
        case .send(let to, let text, let group): return try await send(to: to, text: text, group: group)
        case .pending: return try await pending()
        case .retry: return try await retry()
        case .sync: return try await sync()
        case .status: return try await status()
        case .listen(let count): return try await listen(count: count)
        case .clearCache: return try await clearCache()
        case .open(let with, let group):
            return try await ConversationView(session: self, with: with, group: group).run()
        }
    }

    func loginCommand() async throws -> Int32 {
        guard let token = invocation.token else { throw CLIError("usage: chat --as UID login --token TOKEN") }
        let user = try await login()
        guard await connected(within: 5) else {
            throw CLIError("cannot reach \(invocation.server.absoluteString) to check the token; nothing was kept")
        }
        try keep(token: token)
        output.emit("login", ["uid": user.uid, "name": user.name], human: "logged in as \(user.uid) (\(user.name))")
        return 0
    }

    func logoutCommand() async throws -> Int32 {
        let signedIn = (try? await login()) != nil
        let revoked = (try? await client.logoutAndRevokeToken()) != nil && signedIn
        forgetToken()
        let what =
            signedIn
            ? "logged out \(uid); the cache on this device is wiped"
            : "forgot \(uid)'s token (there was no session to end)"
        output.emit(
            "logout", ["uid": uid, "cacheWiped": signedIn, "tokenRevoked": revoked],
            human: what
                + (revoked
                    ? "; chatd revoked the token" : signedIn ? "; chatd could not be asked to revoke the token" : ""))
        return 0
    }

    func conversations() async throws -> Int32 {
        _ = try await login()
        let request = ConversationRequest.ConversationRequestBuilder(limit: 50).build(client: client)
        return await phases(request.next()) { (conversation: Conversation) in
            let name =
                (conversation.conversationWith as? User)?.name ?? (conversation.conversationWith as? Group)?.name
                ?? conversation.conversationId
            let last = conversation.lastMessage.map { " — " + Output.line($0) } ?? ""
            let unread = conversation.unreadMessageCount > 0 ? " [\(conversation.unreadMessageCount) unread]" : ""
            return (
                ["id": conversation.conversationId, "name": name, "unread": conversation.unreadMessageCount],
                "\(name)\(unread)\(last)"
            )
        }
    }

    func history(with peer: String, limit: Int, group: Bool) async throws -> Int32 {
        _ = try await login()
        // Read once the connection is up (or has failed): a page fetched while live reaches the
        // live head, so after a later disconnect the catch-up sync can extend it.
        _ = await connected(within: 3)
        let builder = MessagesRequest.MessageRequestBuilder().set(limit: limit)
        if group { builder.set(guid: peer) } else { builder.set(uid: peer) }
        let request = try builder.build(client: client)
        return await phases(request.previous()) { (message: BaseMessage) in
            (Output.fields(message), Output.line(message))
        }
    }

    /// Prints a two-phase read: each phase labelled with its latency; offline, the server
    /// phase says so (and the run still succeeds: the cache answered).
    func phases<Item: Sendable>(
        _ stream: AsyncThrowingStream<FetchPhase<Item>, any Error>,
        _ describe: (Item) -> ([String: Any], String)
    ) async -> Int32 {
        let started = Date()
        func milliseconds() -> Int { Int(Date().timeIntervalSince(started) * 1000) }
        do {
            for try await phase in stream {
                let (name, items): (String, [Item]) =
                    switch phase {
                    case .cached(let items): ("cached", items)
                    case .server(let items): ("server", items)
                    }
                let elapsed = milliseconds()
                output.emit(
                    "phase", ["phase": name, "ms": elapsed, "count": items.count],
                    human: "— \(name) (\(elapsed) ms): \(items.count)")
                for item in items {
                    let (fields, line) = describe(item)
                    output.emit("item", fields.merging(["phase": name]) { first, _ in first }, human: "  " + line)
                }
            }
            return 0
        } catch let error as ChatException where error.errorCode == ChatException.internetUnavailable {
            output.emit(
                "phase", ["phase": "server", "offline": true, "code": error.errorCode],
                human: "— server: unreachable (offline); the cached phase above is what this device knows")
            return 0
        } catch {
            output.fail("\(error)", code: (error as? ChatException)?.errorCode)
            return 1
        }
    }

    func send(to receiver: String, text: String, group: Bool) async throws -> Int32 {
        _ = try await login()
        _ = await connected(within: 3)
        let client = client
        do {
            // Online, the answer comes at once; a send still waiting after 8 s stays queued.
            guard
                let message = try await within(
                    seconds: 8,
                    {
                        try await client.sendTextMessage(
                            message: TextMessage(
                                receiverUid: receiver, text: text, receiverType: group ? .group : .user))
                    })
            else { return queued(to: receiver) }
            output.emit("sent", Output.fields(message), human: "sent (id \(message.id))")
            return 0
        } catch let error as ChatException where error.errorCode == ChatException.internetUnavailable {
            return queued(to: receiver)
        } catch let error as ChatException {
            output.fail("not sent: \(error.errorDescription)", code: error.errorCode)
            return 1
        }
    }

    private func queued(to receiver: String) -> Int32 {
        output.emit(
            "queued", ["to": receiver],
            human: "queued (offline): it is sent when the connection returns (chat retry, or any chat command online)")
        return 0
    }

    func pending() async throws -> Int32 {
        _ = try await login()
        let messages = client.getPendingMessages()
        output.emit("pending", ["count": messages.count], human: "\(messages.count) message(s) waiting to be sent")
        for message in messages {
            var fields = Output.fields(message)
            fields["status"] = message.messageStatus.rawValue
            let reason = message.getFailureReason()
            if let reason { fields["failure"] = reason.rawValue }
            output.emit(
                "item", fields,
                human:
                    "  #\(message.localMessageId ?? 0) → \(message.receiverUid): \((message as? TextMessage)?.text ?? message.type) [\(message.messageStatus.rawValue)\(reason.map { ", \($0.rawValue)" } ?? "")]"
            )
        }
        return 0
    }

    func retry() async throws -> Int32 {
        _ = try await login()
        guard await connected(within: 5) else {
            throw CLIError("offline: cannot reach \(invocation.server.absoluteString); nothing was sent")
        }
        client.retryAllFailedMessages()
        await client.sendPendingMessages()
        let left = client.getPendingMessages()
        output.emit(
            "retry", ["left": left.count],
            human: left.isEmpty ? "everything queued is sent" : "\(left.count) message(s) still waiting")
        return left.isEmpty ? 0 : 1
    }

    func sync() async throws -> Int32 {
        let queued = Countdown(nil)
        events.print { [output, client] name, fields, line in
            if name == "sync.start", let before = queued.value, before > 0 {
                // The connection settled: the outbox went first, then this sweep.
                let sent = before - client.getPendingMessages().count
                output.emit(
                    "outbox.flushed", ["sent": sent, "left": before - sent],
                    human:
                        "outbox: \(sent) queued message(s) sent before the sync\(sent < before ? ", \(before - sent) still waiting" : "")"
                )
            }
            if name.hasPrefix("sync") || name == "messages.synced" { output.emit(name, fields, human: line) }
            if name == "message", fields["source"] as? String == "sync" {
                output.emit(name, fields, human: "new: " + line)
            }
        }
        _ = try await login()
        queued.value = client.getPendingMessages().count
        guard await connected(within: 5) else {
            throw CLIError("offline: cannot reach \(invocation.server.absoluteString) to sync")
        }
        // The connection's own sweep runs first (queued messages go before it); then, if it
        // left a backlog, one forced sweep more.
        switch await events.first(of: ["sync.finish", "sync.failed"], seconds: 60) {
        case "sync.finish"?: break
        case "sync.failed"?: throw CLIError("the sync failed; it resumes on the next connection (chat sync again)")
        default: throw CLIError("the sync did not finish in time")
        }
        let outcome = events.outcome
        output.emit(
            "sync.outcome", ["outcome": outcome?.rawValue ?? "conversations-only"],
            human: outcome == .partial
                ? "outcome: partial (more changes remain: run chat sync again in 15 s)"
                : outcome == .caughtUp
                    ? "outcome: caught up" : "outcome: first sync, conversation list only (history loads as you scroll)"
        )
        return 0
    }

    func status() async throws -> Int32 {
        _ = try await login()
        _ = await connected(within: 2)
        let encryption = client.getOfflineEncryptionStatus()
        let last = client.getLastSyncTimestamp()
        let connection = client.getConnectionStatus().rawValue
        let sync = client.getSyncState().rawValue
        let bytes = client.getCacheSize()
        let pending = client.getPendingMessages().count
        let fields: [String: Any] = [
            "connection": connection, "sync": sync, "lastSync": last, "cacheBytes": bytes, "pending": pending,
            "encryption": [
                "enabled": encryption["enabled"] as? Bool ?? false, "atRest": encryption["atRest"] as? String ?? "NONE",
                "keyStorage": encryption["keyStorage"] as? String ?? "NONE",
                "cipher": (encryption["cipher"] as? String).map { $0 as Any } ?? NSNull()
            ]
        ]
        let lastText =
            last == 0 ? "never" : ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(last)))
        output.emit(
            "status", fields,
            human: """
                user:        \(uid) on \(invocation.server.absoluteString)
                connection:  \(connection)
                sync:        \(sync), last \(lastText)
                cache:       \(bytes) bytes, offline support \(client.isOfflineEnabled() ? "on" : "off")
                outbox:      \(pending) pending
                encryption:  \(encryption["atRest"] as? String ?? "NONE") (key storage \(encryption["keyStorage"] as? String ?? "NONE"))
                """)
        return 0
    }

    func listen(count: Int?) async throws -> Int32 {
        let remaining = Countdown(count)
        let (done, finish) = AsyncStream<Void>.makeStream()
        events.print { [output] name, fields, line in
            guard
                ["message", "message.edited", "message.deleted", "typing", "read", "connected", "disconnected"]
                    .contains(name)
            else { return }
            output.emit(name, fields, human: line)
            if name.hasPrefix("message") || name == "typing" || name == "read", remaining.tick() { finish.yield() }
        }
        _ = try await login()
        output.emit("listening", ["uid": uid], human: "listening as \(uid) (^C to stop)")
        for await _ in done { break }
        return 0
    }

    func clearCache() async throws -> Int32 {
        _ = try await login()
        let before = client.getCacheSize()
        client.clearOfflineCache()
        output.emit(
            "cleared", ["before": before, "after": client.getCacheSize()],
            human: "cache cleared (\(before) → \(client.getCacheSize()) bytes); the next sync starts afresh")
        return 0
    }
}

/// Counts events down to zero (nil: forever); also a locked number to share with callbacks.
final class Countdown: Sendable {
    private let left: Locked<Int?>
    init(_ count: Int?) { left = Locked(count) }
    var value: Int? {
        get { left.current }
        set { left.withLock { $0 = newValue } }
    }
    /// True when this was the last one.
    func tick() -> Bool {
        left.withLock { left in
            guard let value = left else { return false }
            left = value - 1
            return value - 1 <= 0
        }
    }
}

/// `work`'s value, or nil when `seconds` pass first (the work's wait is cancelled then).
func within<T: Sendable>(seconds: Double, _ work: @escaping @Sendable () async throws -> T) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await work() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
}
