import ChatTesting
import Foundation
import OfflineChat
// outbox-bench: issue #5's benchmark against a real chatd (see docs/PERFORMANCE.md).
//   1. Queue-to-pending latency: offline, `sendTextMessage` until `onMessagePending` (the
//      outbox commit) for each message of the backlog, against a baseline of the same two-row SQLite transaction through
//      SQLiteKit on a file with the cache's settings; and, to tell the SDK's share from the
//      cache's, `ChatCache.enqueue` alone on a fresh cache (its schema, indexes and limits).
//   2. Flush of a backlog on reconnect: messages sent per second from the connection coming
//      back until the last `onMessageSent`, against a baseline of the same number of plain
//      sequential POST /v1/messages through URLSession (keep-alive).
// Usage: outbox-bench [--backlog N]   (default 5,000; $CHATD_BINARY names chatd)
import OfflineChatCache
import OfflineChatSQLite

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil }
        ?? value
}
let backlog = option("--backlog", default: 5_000)

// measures throughput, not the limits
let server = try LiveChatd(arguments: ["--write-rate", "0", "--upload-rate", "0"])
let aliceToken = try await server.user("alice")
_ = try await server.user("bob")
_ = try await server.user("carol")
let storage = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: storage) }

var offline = OfflineConfig()
offline.enabled = true
offline.maxPendingMessages = 10_000
var config = ChatConfig(
    appID: "bench", server: server.url, storageDirectory: storage, offline: offline,
    callbackQueue: DispatchQueue(label: "bench"), logger: StandardErrorLogger(minimumLevel: .error))
config.connectionSettleDelay = 0
config.reconnectMaxDelay = 1_000
let client = try ChatClient(config: config)
let connection = ConnectionEvents()
client.addConnectionListener("bench", connection)
_ = try await client.login(uid: "alice", authToken: aliceToken)
await connection.next("connected")
server.stop()
await connection.next("disconnected")

print("outbox-bench: chatd \(server.url), SQLCipher \(Connection.cipherVersion ?? "absent")")

// 1. Queue-to-pending latency, offline.
func percentile(_ values: [Double], _ p: Double) -> Double {
    values.sorted()[min(values.count - 1, Int(Double(values.count) * p))]
}
var latencies: [Double] = []
var calls: [Double] = []
for index in 0..<backlog {
    let started = DispatchTime.now().uptimeNanoseconds
    let pending: Double = await withCheckedContinuation { continuation in
        client.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "queued message number \(index)", receiverType: .user),
            onMessagePending: { _ in
                continuation.resume(returning: Double(DispatchTime.now().uptimeNanoseconds - started))
            },
            onMessageSent: { _ in }, onError: { _ in })
        calls.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000)
    }
    latencies.append(pending / 1_000)
}
let baseline = try rawQueueBaseline(count: backlog)
print(
    String(
        format: "  queue-to-pending (%d sends, offline): median %.0f µs, p99 %.0f µs (the call itself: median %.0f µs)",
        latencies.count, percentile(latencies, 0.5), percentile(latencies, 0.99), percentile(calls, 0.5)))
print(
    String(
        format: "  baseline: the same two-row transaction through SQLiteKit: median %.0f µs = %.2f × baseline",
        percentile(baseline, 0.5), percentile(latencies, 0.5) / percentile(baseline, 0.5)))
let floor = try schemaFloor(count: backlog)
print(
    String(
        format:
            "  the engine's floor: the same rows in the cache's schema (its indexes), raw SQL: median %.0f µs = %.2f × baseline",
        percentile(floor, 0.5), percentile(floor, 0.5) / percentile(baseline, 0.5)))
let cacheAlone = try cacheEnqueues(count: backlog)
print(
    String(
        format: "  the cache alone (ChatCache.enqueue, its schema and limits): median %.0f µs = %.2f × baseline",
        percentile(cacheAlone, 0.5), percentile(cacheAlone, 0.5) / percentile(baseline, 0.5)))

// 2. Flush of the whole backlog on reconnect.
let total = client.getPendingMessages().count
try server.restart()
await connection.next("connected")
let flushStart = Date()
// Until the outbox is empty (the settle already started the flush; this joins it).
var left = total
while left > 0 {
    await client.sendPendingMessages()
    left = client.getPendingMessages().count
}
let flushSeconds = Date().timeIntervalSince(flushStart)
let direct = try await directPosts(count: total)
print(
    String(
        format: "  flush of a %d-message backlog after reconnect: %.2f s = %.0f messages/s", total, flushSeconds,
        Double(total) / flushSeconds))
print(
    String(
        format:
            "  baseline: %d sequential POST /v1/messages (URLSession, keep-alive): %.2f s = %.0f messages/s; the flush takes %.2f × baseline",
        total, direct, Double(total) / direct, flushSeconds / direct))
client.logout()
server.stop()

/// The outbox's commit without the SDK: a message row and an outbox row in one immediate
/// transaction, WAL, synchronous=NORMAL. Microseconds per commit.
func rawQueueBaseline(count: Int) throws -> [Double] {
    let path = storage.appendingPathComponent("baseline.sqlite").path
    let db = try Connection(path: path)
    try db.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
    try db.execute(
        """
        CREATE TABLE m(local_id INTEGER PRIMARY KEY, id INTEGER, muid TEXT, conversation_id TEXT, sender TEXT, text TEXT, sent_at INTEGER);
        CREATE TABLE o(local_id INTEGER PRIMARY KEY, conversation_id TEXT, state TEXT, request TEXT)
        """)
    var times: [Double] = []
    for index in 0..<count {
        let started = DispatchTime.now().uptimeNanoseconds
        try db.transaction(.immediate) { db in
            try db.run(
                "INSERT INTO m(muid, conversation_id, sender, text, sent_at) VALUES (?, 'alice~bob', 'alice', ?, ?)",
                [UUID().uuidString, "queued message number \(index)", Int64(index)])
            try db.run(
                "INSERT INTO o(local_id, conversation_id, state, request) VALUES (?, 'alice~bob', 'pending', ?)",
                [db.lastInsertRowID, "{\"receiver\":\"bob\",\"text\":\"queued message number \(index)\"}"])
        }
        times.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000)
    }
    return times
}

/// The write a queued send cannot do without, in the cache's own schema (a fresh cache's file:
/// its tables and indexes, WAL, synchronous=NORMAL): the message row (its indexes and
/// AUTOINCREMENT), the outbox row and the conversation's usage row, in one immediate
/// transaction of three plain statements. Microseconds per commit.
func schemaFloor(count: Int) throws -> [Double] {
    let directory = storage.appendingPathComponent("floor")
    try ChatCache(directory: directory, uid: "alice", clock: { 0 }).close()
    let db = try Connection(path: directory.appendingPathComponent("cache.sqlite").path)
    try db.execute("PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16000")
    var times: [Double] = []
    for index in 0..<count {
        let muid = UUID().uuidString
        let text = "queued message number \(index)"
        let started = DispatchTime.now().uptimeNanoseconds
        try db.transaction(.immediate) { db in
            try db.run(
                """
                INSERT INTO messages(muid, conversation_id, sender, receiver, receiver_type, category, type, text,
                                     sent_at, updated_at)
                VALUES (?, 'alice~bob', 'alice', 'bob', 'user', 'message', 'text', ?, ?, ?)
                """, [muid, text, Int64(index), Int64(index)])
            try db.run(
                "INSERT INTO outbox(local_id, conversation_id, state, request) VALUES (?, 'alice~bob', 'pending', ?)",
                [db.lastInsertRowID, "{\"muid\":\"\(muid)\",\"receiver\":\"bob\",\"text\":\"\(text)\"}"])
            try db.run(
                "INSERT OR REPLACE INTO usage(conversation_id, last_access) VALUES ('alice~bob', ?)", [Int64(index)])
        }
        times.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000)
    }
    return times
}

/// `ChatCache.enqueue` of `count` text messages on a fresh cache (the SDK's default limits), no SDK
/// around it. Microseconds per call.
func cacheEnqueues(count: Int) throws -> [Double] {
    // The limits the SDK opens it with (`OfflineConfig`'s defaults).
    let defaults = OfflineConfig()
    let cache = try ChatCache(
        directory: storage.appendingPathComponent("cache-alone"), uid: "alice",
        limits: CacheLimits(
            maxConversations: defaults.maxConversations,
            maxMessagesPerConversation: defaults.maxMessagesPerConversation,
            maxStorageSize: defaults.maxStorageSize),
        clock: { Int64(Date().timeIntervalSince1970 * 1000) })
    defer { cache.close() }
    var times: [Double] = []
    for index in 0..<count {
        let muid = UUID().uuidString
        let text = "queued message number \(index)"
        let shown = MessagePayload(
            id: 0, muid: muid, conversationId: "alice~bob", sender: "alice", receiver: "bob", receiverType: .user,
            category: .message, type: "text", text: text, attachment: nil, customData: nil, metadata: nil,
            sentAt: Int64(index), updatedAt: Int64(index), editedAt: nil, deletedAt: nil, parentMessageId: nil)
        let started = DispatchTime.now().uptimeNanoseconds
        _ = try cache.enqueue(
            SendMessageRequest(muid: muid, receiver: "bob", text: text), showing: shown, maxPending: 10_000)
        times.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000)
    }
    return times
}

/// Seconds for `count` plain sequential sends from alice to carol.
func directPosts(count: Int) async throws -> Double {
    let session = URLSession(configuration: .ephemeral)
    let started = Date()
    for index in 0..<count {
        var request = URLRequest(url: server.url.appendingPathComponent(Endpoints.messages))
        request.httpMethod = "POST"
        request.setValue("Bearer \(aliceToken)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(
            SendMessageRequest(muid: UUID().uuidString, receiver: "carol", text: "direct \(index)"))
        let (_, response) = try await session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 201 else {
            throw LiveChatd.Failure("direct send \(index) failed")
        }
    }
    return Date().timeIntervalSince(started)
}
