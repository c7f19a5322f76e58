// sync-bench: issue #6's benchmark against a real chatd (see docs/PERFORMANCE.md). A client
// cold-starts, goes offline (a FaultProxy takes the network away) while peers send it a
// backlog, comes back and syncs until caught up (one page of 1,000 changes per sweep; the
// 15 s cooldown between forced sweeps passes on a ManualClock). Reported: changes ingested
// per second over the sweeps, against a raw SQLite bulk insert of the same rows in the same
// run, and the process's peak memory during the catch-up.
// Usage: sync-bench [--changes N] [--peers N] [--encrypted] [--ingest-only]   ($CHATD_BINARY names chatd)
import ChatCache
import ChatTesting
import Foundation
import OfflineChat
import SQLiteKit

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } ?? value
}
let changes = option("--changes", default: 100_000)
let peers = option("--peers", default: 10)

let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sync-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: storage) }

// 1. Ingest alone: the same 100 pages merged by ChatCache.applySyncPage, in process, into a
//    plain cache and into an SQLCipher-encrypted one.
let ingest = try ingestOnly(count: changes, key: nil)
let ingestRaw = try rawBulkInsert(count: changes, name: "raw-ingest")
print(String(format: "sync-bench: ingest of %d changes (100 pages) by ChatCache.applySyncPage: %.2f s = %.0f changes/s", changes, ingest,
             Double(changes) / ingest))
print(String(format: "  baseline: raw bulk insert of the same rows: %.2f s = %.0f rows/s; the merge runs at %.2f of raw speed (goal: at least 0.33)",
             ingestRaw, Double(changes) / ingestRaw, ingestRaw / ingest))
if Connection.cipherAvailable {
    let encrypted = try ingestOnly(count: changes, key: EncryptionKey(bytes: Array(repeating: 7, count: 32)))
    print(String(format: "  the same into an encrypted cache (SQLCipher %@): %.2f s = %.2f × plain (goal: at most 1.3 ×)",
                 Connection.cipherVersion ?? "?", encrypted, encrypted / ingest))
}
let (storeLive, follow) = try liveFollowing(count: 10_000)
print(String(format: "  live: storing a realtime message %.0f µs; moving the sync point along with it %.0f µs more (%.0f %%)",
             storeLive, follow, 100 * follow / storeLive))
if arguments.contains("--ingest-only") { exit(0) }

// 2. End to end, through the SDK and a live chatd.
let server = try LiveChatd()
let bobToken = try await server.user("bob")
let proxy = try FaultProxy(upstreamPort: server.port)
let clock = ManualClock()
var offline = OfflineConfig()
offline.enabled = true
var config = ChatConfig(appID: "bench", server: proxy.url, storageDirectory: storage, offline: offline,
                        callbackQueue: DispatchQueue(label: "bench"), clock: clock, logger: StandardErrorLogger(minimumLevel: .error))
config.requestTimeout = 120
let bob = try ChatClient(config: config)
let events = BenchEvents()
bob.addSyncListener("bench", events)
bob.addConversationListener("bench", events)
let connection = ConnectionEvents()
bob.addConnectionListener("bench", connection)
_ = try await bob.login(uid: "bob", authToken: bobToken)
await connection.next("connected")
await clock.waitForSleepers(1)
clock.advance(by: config.connectionSettleDelay)
await events.next("finish")  // the cold start: the sync point is the head

proxy.mode = .offline
await connection.next("disconnected")
print("sync-bench end to end: \(changes) messages from \(peers) peers, chatd \(server.url), SQLCipher \(Connection.cipherVersion ?? "absent")")
let generated = Date()
try await withThrowingTaskGroup(of: Void.self) { group in
    for peer in 0..<peers {
        group.addTask {
            let token = try await server.user("peer\(peer)")
            for index in stride(from: peer, to: changes, by: peers) {
                let (status, _) = try await server.request("POST", Endpoints.messages, token: token,
                                                           json: SendMessageRequest(muid: "m\(index)", receiver: "bob", text: "backlog message \(index)"))
                guard status == 201 else { throw LiveChatd.Failure("send \(index): \(status)") }
            }
        }
    }
    try await group.waitForAll()
}
print(String(format: "  backlog written in %.1f s", Date().timeIntervalSince(generated)))

// The catch-up: peak memory counted from here.
ProcessMemory.resetPeak()
let before = ProcessMemory.peakResidentKilobytes()
proxy.mode = .pass
await clock.waitForSleepers(1)
clock.advance(by: clock.nextDeadline ?? 0)
await connection.next("connected")
await clock.waitForSleepers(1)
let started = Date()
clock.advance(by: config.connectionSettleDelay)
var ingested = 0
var sweeps = 0
while true {
    let (count, outcome) = await events.nextSweep()
    await events.next("finish")  // the sweep is over (the throttle is idle) only then
    ingested += count
    sweeps += 1
    if outcome == .caughtUp { break }
    clock.advance(by: 15_000)
    try await forceSync(bob)
}
let seconds = Date().timeIntervalSince(started)
let peak = ProcessMemory.peakResidentKilobytes()
let raw = try rawBulkInsert(count: ingested, name: "raw")
print(String(format: "  catch-up: %d changes in %d sweeps, %.2f s = %.0f changes/s", ingested, sweeps, seconds, Double(ingested) / seconds))
print(String(format: "  baseline: raw bulk insert of %d message rows (SQLiteKit, 1,000 per transaction) %.2f s = %.0f rows/s",
             ingested, raw, Double(ingested) / raw))
let merging = events.mergeSeconds
print(String(format: "  of which refreshing the conversation list (one page per sweep): %.2f s", events.conversationSeconds))
print(String(format: "  of which merging the pages into the cache: %.2f s = %.0f changes/s", merging, Double(ingested) / merging))
print(String(format: "  ingest (the merge) at %.2f of raw speed (goal: at least 0.33); end to end, fetching included, %.2f",
             raw / merging, raw / seconds))
print("  peak RSS during the catch-up: \(peak / 1024) MiB (before it: \(before / 1024) MiB)")
bob.logout()
server.stop()

/// The same rows without the SDK: a table with the cache's message columns and indexes,
/// prepared inserts, one transaction per 1,000 rows, WAL, synchronous=NORMAL.
func rawBulkInsert(count: Int, name: String) throws -> Double {
    try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
    let db = try Connection(path: storage.appendingPathComponent("\(name).sqlite").path)
    try db.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
    try db.execute("""
        CREATE TABLE messages(local_id INTEGER PRIMARY KEY AUTOINCREMENT, id INTEGER UNIQUE, muid TEXT, conversation_id TEXT NOT NULL,
            sender TEXT NOT NULL, receiver TEXT NOT NULL, text TEXT, sent_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
        CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
        CREATE UNIQUE INDEX messages_by_muid ON messages(sender, muid)
        """)
    let started = Date()
    for first in stride(from: 0, to: count, by: 1_000) {
        try db.transaction(.immediate) { db in
            for index in first..<min(count, first + 1_000) {
                let peer = "peer\(index % peers)"
                try db.run("INSERT INTO messages(id, muid, conversation_id, sender, receiver, text, sent_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           [Int64(index + 1), "m\(index)", "bob~\(peer)", peer, "bob", "backlog message \(index)", Int64(index), Int64(index)])
            }
        }
    }
    return Date().timeIntervalSince(started)
}

/// The backlog as changelog pages (the rows `rawBulkInsert` writes), merged page by page
/// into a fresh cache with the SDK's default limits; seconds spent in `applySyncPage`.
func ingestOnly(count: Int, key: EncryptionKey?) throws -> Double {
    let cache = try ChatCache(directory: storage.appendingPathComponent("ingest-\(key == nil ? "plain" : "encrypted")"), uid: "bob", key: key,
                              limits: CacheLimits(maxConversations: 100, maxMessagesPerConversation: 500, maxStorageSize: 250 << 20),
                              clock: { 0 })
    defer { cache.close() }
    try cache.recordSyncHead(cursor: "c1.0", serverTime: 0)
    var seconds = 0.0
    for first in stride(from: 0, to: count, by: 1_000) {
        let page = (first..<min(count, first + 1_000)).map { index -> ChangePayload in
            let message = textToBob(id: Int64(index + 1), index: index, from: "peer\(index % peers)", text: "backlog message \(index)")
            return ChangePayload(seq: Int64(index + 1), kind: .messageCreated, conversationId: message.conversationId, message: message, at: Int64(index))
        }
        let started = Date()
        _ = try cache.applySyncPage(page, from: try cache.syncPoint(), cursor: "c1.\(first + page.count)", serverTime: 0)
        seconds += Date().timeIntervalSince(started)
    }
    return seconds
}

/// A text message from `peer` to bob, sent and last updated at `index`.
func textToBob(id: Int64, index: Int, from peer: String, text: String) -> MessagePayload {
    MessagePayload(id: id, muid: "m\(index)", conversationId: "bob~\(peer)", sender: peer, receiver: "bob", receiverType: .user,
                   category: .message, type: "text", text: text, attachment: nil, customData: nil, metadata: nil,
                   sentAt: Int64(index), updatedAt: Int64(index), editedAt: nil, deletedAt: nil)
}

/// Microseconds per live message: `storeLive` alone, and the `followLiveCursor` after it
/// (the sync point following the realtime stream), over `count` messages from one peer.
func liveFollowing(count: Int) throws -> (store: Double, follow: Double) {
    let cache = try ChatCache(directory: storage.appendingPathComponent("live"), uid: "bob", clock: { 0 })
    defer { cache.close() }
    try cache.recordSyncHead(cursor: "c1.0", serverTime: 0)
    var store: UInt64 = 0, follow: UInt64 = 0
    for index in 1...count {
        let message = textToBob(id: Int64(index), index: index, from: "peer", text: "live message \(index)")
        let started = DispatchTime.now().uptimeNanoseconds
        try cache.storeLive(message)
        let stored = DispatchTime.now().uptimeNanoseconds
        try cache.followLiveCursor("c1.\(index)")
        follow += DispatchTime.now().uptimeNanoseconds - stored
        store += stored - started
    }
    return (Double(store) / Double(count) / 1_000, Double(follow) / Double(count) / 1_000)
}

/// The throwing `forceSyncNow` (top-level code would pick the silent overload).
func forceSync(_ client: ChatClient) async throws {
    try await client.forceSyncNow()
}

/// Sync events, awaited in order, with the timing of each sweep's phases.
final class BenchEvents: SyncListener, ConversationListener, Sendable {
    private let stream: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let sweeps: AsyncStream<(Int, SyncOutcome)>
    private let sweepContinuation: AsyncStream<(Int, SyncOutcome)>.Continuation

    init() {
        (stream, continuation) = AsyncStream<String>.makeStream()
        (sweeps, sweepContinuation) = AsyncStream<(Int, SyncOutcome)>.makeStream()
    }

    /// Per sweep: when the page had been fetched (progress 60) and when it was merged.
    let fetchedAt = Locked<[UInt64]>([])
    let mergedAt = Locked<[UInt64]>([])
    /// Per sweep: the conversation phase's start and end.
    let conversationsStarted = Locked<[UInt64]>([])
    let conversationsDone = Locked<[UInt64]>([])

    func onConversationSyncStarted() { conversationsStarted.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) } }
    func onConversationSyncCompleted(_ conversations: [Conversation]) {
        conversationsDone.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) }
    }

    func onSyncServerProgress(_ progress: Int) {
        if progress == 60 { fetchedAt.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) } }
    }

    func onSyncServerFinish(reInstall: Bool) { continuation.yield("finish") }
    func onMessageSyncCompleted(_ messages: [BaseMessage], _ outcome: SyncOutcome) {
        mergedAt.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) }
        sweepContinuation.yield((messages.count, outcome))
    }

    /// Seconds spent merging (from each page fetched to its completion callback).
    var mergeSeconds: Double { Self.seconds(fetchedAt.current, mergedAt.current) }
    /// Seconds spent refreshing the conversation list (the cold start's excluded).
    var conversationSeconds: Double { Self.seconds(Array(conversationsStarted.current.dropFirst()), Array(conversationsDone.current.dropFirst())) }

    static func seconds(_ starts: [UInt64], _ ends: [UInt64]) -> Double {
        zip(starts, ends).reduce(0) { $0 + Double($1.1 - $1.0) / 1e9 }
    }
    func onMessageSyncError(_ error: ChatException) { print("  sync error: \(error)") }

    func next(_ event: String) async {
        for await seen in stream where seen == event { return }
    }

    func nextSweep() async -> (Int, SyncOutcome) {
        for await sweep in sweeps { return sweep }
        return (0, .caughtUp)
    }
}
