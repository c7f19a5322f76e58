import ChatTesting
import Foundation
import OfflineChat

/// A client process for the crash tests (Tools/Tests/ToolsTests/OutboxCrashTests and
/// SyncCrashTests): the test kills it with SIGKILL at random points and then checks the
/// server, or the cache against the server.
///
///     outbox-crash-probe compose SERVER STORAGE TOKEN TAG COUNT PEER...
///         logs in as alice, prints `ready`, sends COUNT texts `TAG:<seq>` round-robin to the
///         peers, printing `pending <seq>` when one is committed to the outbox and
///         `sent <seq>` when the server has it; prints `done` when all are sent.
///     outbox-crash-probe resume SERVER STORAGE TOKEN
///         logs in again on the same storage, waits for the connection, flushes the outbox
///         and prints `left <count>` (what is still queued).
///     outbox-crash-probe sync SERVER STORAGE TOKEN UID
///         logs in as UID, prints every sync event as a line while the sync that runs when
///         the connection settles goes on, and `done` after it.
///
/// Each line is written straight to the file descriptor, so what the test reads is exactly
/// what happened before the kill.
@main
struct CrashProbe {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 4, let server = URL(string: arguments[1]) else {
            print("usage: outbox-crash-probe compose|resume SERVER STORAGE TOKEN [TAG COUNT PEER...]")
            exit(2)
        }
        var offline = OfflineConfig()
        offline.enabled = true
        offline.maxPendingMessages = 10_000
        var config = ChatConfig(
            appID: "crash-probe", server: server, storageDirectory: URL(fileURLWithPath: arguments[2]),
            offline: offline, callbackQueue: DispatchQueue(label: "probe"),
            logger: StandardErrorLogger(minimumLevel: .error))
        config.connectionSettleDelay = 0
        do {
            let client = try ChatClient(config: config)
            let connection = ConnectionEvents()
            client.addConnectionListener("probe", connection)
            let events = SyncEvents()
            if arguments[0] == "sync" {
                client.addSyncListener("probe", events)
                client.addConversationListener("probe", events)
            }
            _ = try await client.login(uid: arguments[0] == "sync" ? arguments[4] : "alice", authToken: arguments[3])
            switch arguments[0] {
            case "sync" where arguments.count >= 5:
                await events.finished()
                emit("done")
            case "compose" where arguments.count >= 7:
                guard let count = Int(arguments[5]) else { exit(2) }
                await compose(client, tag: arguments[4], count: count, peers: Array(arguments[6...]))
            case "resume":
                await connection.next("connected")
                await client.sendPendingMessages()
                emit("left \(client.getPendingMessages().count)")
            default:
                exit(2)
            }
            exit(0)
        } catch {
            emit("error \(error)")
            exit(1)
        }
    }

    static func compose(_ client: ChatClient, tag: String, count: Int, peers: [String]) async {
        emit("ready")
        let (sent, done) = AsyncStream<Int>.makeStream()
        for seq in 0..<count {
            let message = TextMessage(receiverUid: peers[seq % peers.count], text: "\(tag):\(seq)", receiverType: .user)
            client.sendTextMessage(
                message: message, onMessagePending: { _ in emit("pending \(seq)") },
                onMessageSent: { _ in
                    emit("sent \(seq)")
                    done.yield(seq)
                },
                onError: { error in
                    if error.errorCode != ChatException.internetUnavailable { emit("failed \(seq) \(error.errorCode)") }
                })
        }
        var remaining = count
        for await _ in sent {
            remaining -= 1
            if remaining == 0 { break }
        }
        emit("done")
    }

    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// Prints the sync's events; `finished()` returns after the first sweep ends.
final class SyncEvents: SyncListener, ConversationListener, Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() { (stream, continuation) = AsyncStream<Void>.makeStream() }

    func onSyncServerStart(reInstall: Bool) { CrashProbe.emit("start \(reInstall)") }
    func onSyncServerProgress(_ progress: Int) { CrashProbe.emit("progress \(progress)") }
    func onMessageSyncStarted() { CrashProbe.emit("messages started") }
    func onMessageSyncCompleted(_ messages: [BaseMessage], _ outcome: SyncOutcome) {
        CrashProbe.emit("messages \(messages.count) \(outcome.rawValue)")
    }
    func onSyncServerFinish(reInstall: Bool) {
        CrashProbe.emit("finish")
        continuation.yield()
    }
    func onSyncServerFailed(reInstall: Bool) {
        CrashProbe.emit("failed")
        continuation.yield()
    }

    func finished() async {
        for await _ in stream { return }
    }
}
