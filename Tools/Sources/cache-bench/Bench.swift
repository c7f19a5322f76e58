import ChatTesting
import Foundation
import OfflineChatCache
import OfflineChatProtocol
import OfflineChatSQLite

struct BenchOptions {
    var messages = 1_000_000
    var conversations = 1_000
    var queries = 20_000
    var key: EncryptionKey?
    var queryOnly: URL?
    /// Plain and encrypted caches side by side in one run.
    var compareEncryption = false
    /// Populate through catch-up sync pages (the stretches are the ones a sync proves).
    var synced = false

    var perConversation: Int { max(1, messages / conversations) }

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()[...]
        while let flag = rest.popFirst() {
            switch flag {
            case "--messages": messages = Int(rest.popFirst() ?? "") ?? messages
            case "--conversations": conversations = Int(rest.popFirst() ?? "") ?? conversations
            case "--queries": queries = Int(rest.popFirst() ?? "") ?? queries
            case "--encrypted": key = EncryptionKey(bytes: Array(repeating: 7, count: 32))
            case "--query-only": queryOnly = rest.popFirst().map { URL(fileURLWithPath: $0) }
            case "--compare-encryption": compareEncryption = true
            case "--synced": synced = true
            default:
                FileHandle.standardError.write(Data("cache-bench: unknown option \(flag)\n".utf8))
                exit(2)
            }
        }
    }
}

enum Bench {
    static func conversationID(_ index: Int) -> String { "me~u\(index)" }

    /// Message ids interleave across conversations, as a server's do.
    static func populate(_ cache: ChatCache, options: BenchOptions) throws {
        if options.synced { return try populateBySync(cache, options: options) }
        let per = options.perConversation
        for conversation in 0..<options.conversations {
            let id = conversationID(conversation)
            let page = (0..<per).map { index -> MessagePayload in
                let messageId = Int64(index * options.conversations + conversation + 1)
                return MessagePayload(
                    id: messageId, muid: "m\(messageId)", conversationId: id,
                    sender: index % 2 == 0 ? "me" : "u\(conversation)",
                    receiver: index % 2 == 0 ? "u\(conversation)" : "me", receiverType: .user, category: .message,
                    type: "text", text: "message \(messageId) with some ordinary chat text in it", attachment: nil,
                    customData: nil, metadata: nil, sentAt: messageId * 10, updatedAt: messageId * 10,
                    editedAt: nil, deletedAt: nil)
            }
            try cache.storePage(
                page, scope: .conversation(id), anchor: .latest, limit: per + 1, complete: true, liveSince: nil)
        }
    }

    /// The same messages, as a catch-up sync after a cold start brings them: changelog pages
    /// of 1,000 `message.created` changes in id order, merged by `applySyncPage`.
    static func populateBySync(_ cache: ChatCache, options: BenchOptions) throws {
        try cache.recordSyncHead(cursor: "c1.0", serverTime: 0)
        let total = options.perConversation * options.conversations
        for first in stride(from: 0, to: total, by: 1_000) {
            let changes = (first..<min(total, first + 1_000)).map { offset -> ChangePayload in
                let messageId = Int64(offset + 1)
                let index = offset / options.conversations
                let conversation = offset % options.conversations
                let message = MessagePayload(
                    id: messageId, muid: "m\(messageId)", conversationId: conversationID(conversation),
                    sender: index % 2 == 0 ? "me" : "u\(conversation)",
                    receiver: index % 2 == 0 ? "u\(conversation)" : "me",
                    receiverType: .user, category: .message, type: "text",
                    text: "message \(messageId) with some ordinary chat text in it", attachment: nil, customData: nil,
                    metadata: nil, sentAt: messageId * 10, updatedAt: messageId * 10, editedAt: nil, deletedAt: nil)
                return ChangePayload(
                    seq: messageId, kind: .messageCreated, conversationId: message.conversationId, message: message,
                    at: messageId)
            }
            _ = try cache.applySyncPage(
                changes, from: try cache.syncPoint(), cursor: "c1.\(first + changes.count)", serverTime: 0)
        }
    }

    /// The same random (conversation, anchor) sequence for every run.
    static func anchors(_ options: BenchOptions) -> [(String, Int64)] {
        var generator = SplitMix(seed: 42)
        return (0..<options.queries).map { _ in
            let conversation = Int(generator.next() % UInt64(options.conversations))
            let index = 30 + Int(generator.next() % UInt64(max(1, options.perConversation - 30)))
            return (conversationID(conversation), Int64(index * options.conversations + conversation + 1))
        }
    }

    /// Seconds per query through ChatCache (range lookup, rows, MessagePayload values).
    static func sdkQueries(_ cache: ChatCache, options: BenchOptions) throws -> Double {
        let work = anchors(options)
        var total = 0
        let start = Date()
        for (conversation, anchor) in work {
            total += try cache.cachedPage(.conversation(conversation), .before(anchor), limit: 30).count
        }
        let elapsed = Date().timeIntervalSince(start)
        precondition(total == work.count * 30, "every query should fill its page (got \(total))")
        return elapsed / Double(work.count)
    }

    /// Seconds per query through the raw C API: the same SELECT, every column read into Swift values.
    static func rawQueries(path: String, options: BenchOptions) throws -> Double {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else { fatalError("open") }
        defer { sqlite3_close_v2(db) }
        if let key = options.key {
            let hex = key.bytes.map { String(format: "%02x", $0) }.joined()
            guard
                sqlite3_exec(db, "PRAGMA key = \"x'\(hex)'\"; PRAGMA cipher_page_size = 4096;", nil, nil, nil)
                    == SQLITE_OK
            else { fatalError("key") }
        }
        sqlite3_exec(db, "PRAGMA cache_size = -8000", nil, nil, nil)
        var statement: OpaquePointer?
        let sql =
            "SELECT id, muid, conversation_id, parent_id, sender, receiver, receiver_type, category, type, text, sent_at, updated_at, edited_at, deleted_at, reply_count, call_status, extras FROM messages WHERE conversation_id = ? AND id < ? ORDER BY id DESC LIMIT 30"
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            fatalError("prepare")
        }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let work = anchors(options)
        var total = 0
        var checksum = 0
        let start = Date()
        for (conversation, anchor) in work {
            sqlite3_reset(statement)
            sqlite3_bind_text(statement, 1, conversation, -1, transient)
            sqlite3_bind_int64(statement, 2, anchor)
            while sqlite3_step(statement) == SQLITE_ROW {
                total += 1
                for column in Int32(0)..<17 {
                    switch sqlite3_column_type(statement, column) {
                    case SQLITE_INTEGER: checksum &+= Int(sqlite3_column_int64(statement, column))
                    case SQLITE_TEXT: checksum &+= String(cString: sqlite3_column_text(statement, column)).utf8.count
                    default: break
                    }
                }
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        precondition(total == work.count * 30 && checksum != 0)
        return elapsed / Double(work.count)
    }

    /// First page of the conversation list (each with its last message), 2,000 times: the raw
    /// C API reading every column of the same SELECT into Swift values, and
    /// `ChatCache.cachedConversations`. Seconds per page, each.
    static func conversationList(_ cache: ChatCache, directory: URL, options: BenchOptions) throws -> (Double, Double) {
        let page = (0..<options.conversations).map { index in
            let last = MessagePayload(
                id: Int64(1_000_000 + index), muid: "last\(index)", conversationId: conversationID(index),
                sender: "u\(index)",
                receiver: "me", receiverType: .user, category: .message, type: "text",
                text: "the last message of conversation \(index)", attachment: nil, customData: nil, metadata: nil,
                sentAt: Int64(index), updatedAt: Int64(index), editedAt: nil, deletedAt: nil)
            return ConversationPayload(
                conversationId: conversationID(index), conversationType: .user,
                conversationWith: .user(
                    UserPayload(uid: "u\(index)", name: "User \(index)", avatar: "https://cdn/u\(index).png")),
                lastMessage: last, unreadMessageCount: index % 5, lastDeliveredMessageId: last.id,
                lastReadMessageId: last.id - 1,
                peerDeliveredMessageId: nil, peerReadMessageId: nil, updatedAt: Int64(index))
        }
        try cache.storeConversationPage(page, first: true, last: true)
        let rounds = 2_000
        let raw = try RawReader(
            path: directory.appendingPathComponent("cache.sqlite").path, key: options.key,
            sql: """
                SELECT c.id, c.type, c.updated_at, c.unread, c.delivered_id, c.read_id, c.peer_delivered_id, c.peer_read_id, c.peer_id,
                       c.peer_name, c.peer_image, c.peer_metadata, c.peer_tags, c.user_role, c.user_last_active_at, c.user_status,
                       c.user_blocked_by_me, c.user_has_blocked_me, c.group_type, c.group_description, c.group_owner, c.group_members_count,
                       c.group_created_at, c.group_updated_at, c.group_has_joined, c.group_scope, c.group_joined_at,
                       l.id, l.muid, l.conversation_id, l.parent_id, l.sender, l.receiver, l.receiver_type, l.category, l.type, l.text,
                       l.sent_at, l.updated_at, l.edited_at, l.deleted_at, l.reply_count, l.call_status, l.extras
                FROM conversations c LEFT JOIN last_messages l ON l.conversation_id = c.id
                ORDER BY c.updated_at DESC, c.id DESC LIMIT 30
                """)
        var start = Date()
        for _ in 0..<rounds { precondition(raw.readAll() == 30) }
        let rawSeconds = Date().timeIntervalSince(start) / Double(rounds)
        start = Date()
        for _ in 0..<rounds {
            let list = try cache.cachedConversations(after: nil, limit: 30)
            precondition(list.count == 30 && list[0].lastMessage != nil)
        }
        return (rawSeconds, Date().timeIntervalSince(start) / Double(rounds))
    }

    /// Runs this program in query-only mode on `directory` and returns its peak RSS (KiB).
    static func childPeak(directory: URL, options: BenchOptions) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments =
            [
                "--query-only", directory.path, "--messages", "\(options.messages)",
                "--conversations", "\(options.conversations)", "--queries", "\(options.queries)"
            ]
            + (options.key == nil ? [] : ["--encrypted"])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("peak-rss-kb ") }),
            let value = Int(line.dropFirst("peak-rss-kb ".count))
        else { fatalError("child: \(text)") }
        return value
    }
}

/// A deterministic generator, so every run asks the same questions.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One prepared statement through the raw C API, every column of every row read into Swift
/// values: the baseline a cache read is held against.
final class RawReader {
    private var db: OpaquePointer?
    private var statement: OpaquePointer?

    init(path: String, key: EncryptionKey?, sql: String) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { fatalError("open") }
        if let key {
            let hex = key.bytes.map { String(format: "%02x", $0) }.joined()
            guard
                sqlite3_exec(db, "PRAGMA key = \"x'\(hex)'\"; PRAGMA cipher_page_size = 4096;", nil, nil, nil)
                    == SQLITE_OK
            else { fatalError("key") }
        }
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { fatalError("prepare: \(sql)") }
    }

    deinit {
        sqlite3_finalize(statement)
        sqlite3_close_v2(db)
    }

    /// Runs the statement; returns the row count.
    func readAll() -> Int {
        sqlite3_reset(statement)
        var rows = 0
        var checksum = 0
        let columns = sqlite3_column_count(statement)
        while sqlite3_step(statement) == SQLITE_ROW {
            rows += 1
            for column in 0..<columns {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: checksum &+= Int(sqlite3_column_int64(statement, column))
                case SQLITE_TEXT: checksum &+= String(cString: sqlite3_column_text(statement, column)).utf8.count
                default: break
                }
            }
        }
        precondition(checksum != 0 || rows == 0)
        return rows
    }
}
