import ChatCache
import ChatTesting
import ChatProtocol
import Foundation
import SQLiteKit

struct BenchOptions {
    var messages = 1_000_000
    var conversations = 1_000
    var queries = 20_000
    var key: EncryptionKey?
    var queryOnly: URL?
    /// Plain and encrypted caches side by side in one run.
    var compareEncryption = false

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
            default: FileHandle.standardError.write(Data("cache-bench: unknown option \(flag)\n".utf8)); exit(2)
            }
        }
    }
}

enum Bench {
    static func conversationID(_ index: Int) -> String { "me~u\(index)" }

    /// Message ids interleave across conversations, as a server's do.
    static func populate(_ cache: ChatCache, options: BenchOptions) throws {
        let per = options.perConversation
        for conversation in 0..<options.conversations {
            let id = conversationID(conversation)
            let page = (0..<per).map { index -> MessagePayload in
                let messageId = Int64(index * options.conversations + conversation + 1)
                return MessagePayload(id: messageId, muid: "m\(messageId)", conversationId: id, sender: index % 2 == 0 ? "me" : "u\(conversation)",
                                      receiver: index % 2 == 0 ? "u\(conversation)" : "me", receiverType: .user, category: .message,
                                      type: "text", text: "message \(messageId) with some ordinary chat text in it", attachment: nil,
                                      customData: nil, metadata: nil, sentAt: messageId * 10, updatedAt: messageId * 10,
                                      editedAt: nil, deletedAt: nil)
            }
            try cache.storePage(page, scope: .conversation(id), anchor: .latest, limit: per + 1, complete: true, liveSince: nil)
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
            guard sqlite3_exec(db, "PRAGMA key = \"x'\(hex)'\"; PRAGMA cipher_page_size = 4096;", nil, nil, nil) == SQLITE_OK else { fatalError("key") }
        }
        sqlite3_exec(db, "PRAGMA cache_size = -8000", nil, nil, nil)
        var statement: OpaquePointer?
        let sql = "SELECT id, muid, conversation_id, parent_id, sender, receiver, receiver_type, category, type, text, sent_at, updated_at, edited_at, deleted_at, reply_count, call_status, extras FROM messages WHERE conversation_id = ? AND id < ? ORDER BY id DESC LIMIT 30"
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { fatalError("prepare") }
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

    /// First page of the conversation list: raw query vs ChatCache (which decodes each JSON entry).
    static func conversationList(_ cache: ChatCache, directory: URL, options: BenchOptions) throws -> (Double, Double) {
        let page = (0..<options.conversations).map { index in
            ConversationPayload(conversationId: conversationID(index), conversationType: .user,
                                conversationWith: .user(UserPayload(uid: "u\(index)", name: "User \(index)")), lastMessage: nil,
                                unreadMessageCount: index % 5, lastDeliveredMessageId: nil, lastReadMessageId: nil,
                                peerDeliveredMessageId: nil, peerReadMessageId: nil, updatedAt: Int64(index))
        }
        try cache.storeConversationPage(page, first: true, last: true)
        let rounds = 2_000
        let connection = try Connection(path: directory.appendingPathComponent("cache.sqlite").path, key: options.key)
        var start = Date()
        for _ in 0..<rounds {
            let rows = try connection.query("SELECT payload FROM conversations ORDER BY updated_at DESC, id DESC LIMIT 30")
            precondition(rows.count == 30)
        }
        let raw = Date().timeIntervalSince(start) / Double(rounds)
        start = Date()
        for _ in 0..<rounds {
            let list = try cache.cachedConversations(after: nil, limit: 30)
            precondition(list.count == 30)
        }
        return (raw, Date().timeIntervalSince(start) / Double(rounds))
    }

    /// Runs this program in query-only mode on `directory` and returns its peak RSS (KiB).
    static func childPeak(directory: URL, options: BenchOptions) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--query-only", directory.path, "--messages", "\(options.messages)",
                             "--conversations", "\(options.conversations)", "--queries", "\(options.queries)"]
            + (options.key == nil ? [] : ["--encrypted"])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("peak-rss-kb ") }),
              let value = Int(line.dropFirst("peak-rss-kb ".count)) else { fatalError("child: \(text)") }
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
