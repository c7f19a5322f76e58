import Foundation
import OfflineChatSQLite

/// A whole deployment as JSON lines, the same on both engines (their tables and columns are
/// the same): a header, then one line per row, `{"table":"users","row":{"uid":"alice",…}}`.
/// Moving a SQLite deployment to PostgreSQL is `chatd export` from the one and `chatd import`
/// into the other. Media files are not in it: they stay in the data directory.
enum DeploymentExport {
    static let header = #"{"format":"chatd-export","version":1}"#

    /// Columns the database computes from others, by table: neither exported nor written by an
    /// import.
    static let computed: [String: Set<String>] = ["conversation_members": ["recency"]]

    /// Every table in an order that satisfies their references, with the key that orders it.
    static let tables: [(name: String, key: String)] = [
        ("users", "uid"), ("tokens", "token"), ("groups", "guid"), ("conversations", "id"),
        ("conversation_members", "conversation_id, uid"), ("messages", "id"),
        ("message_bodies", "conversation_id, id"), ("reactions", "id"),
        ("notifications", "id"), ("blocks", "blocker, blocked"), ("group_bans", "guid, uid"), ("uploads", "id"),
        ("upload_refs", "upload_id, message_id"), ("changes", "id"), ("user_heads", "uid"), ("inbox", "uid, pts"),
        ("group_heads", "conversation_id"), ("group_log", "conversation_id, pts"),
        ("group_spans", "conversation_id, uid, from_pts"), ("admin_audit", "id"),
        ("meta", "key")
    ]
    static let rowsPerPage = 2_000

    struct Line: Codable {
        let table: String
        let row: [String: Value]
    }

    /// A column's value: the store keeps integers, text and NULL (reals for completeness).
    enum Value: Codable, Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)

        init(_ value: SQLValue) {
            switch value {
            case .null: self = .null
            case .integer(let number): self = .integer(number)
            case .real(let number): self = .real(number)
            case .text(let text): self = .text(text)
            case .blob(let bytes): self = .text(String(decoding: bytes, as: UTF8.self))
            }
        }

        var sqlValue: any SQLValueConvertible {
            switch self {
            case .null: SQLValue.null
            case .integer(let number): number
            case .real(let number): number
            case .text(let text): text
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let number = try? container.decode(Int64.self) {
                self = .integer(number)
            } else if let number = try? container.decode(Double.self) {
                self = .real(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .integer(let number): try container.encode(number)
            case .real(let number): try container.encode(number)
            case .text(let text): try container.encode(text)
            }
        }
    }
}

extension Store {
    /// Writes every row, one consistent snapshot, to `output` (line by line).
    public func export(to output: (String) throws -> Void) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try output(DeploymentExport.header)
        try read { db in
            for table in DeploymentExport.tables {
                let computed = DeploymentExport.computed[table.name] ?? []
                var offset = 0
                while true {
                    let rows = try db.query(
                        "SELECT * FROM \(table.name) ORDER BY \(table.key) LIMIT ? OFFSET ?",
                        [DeploymentExport.rowsPerPage, offset])
                    for row in rows {
                        let values = Dictionary(
                            uniqueKeysWithValues: zip(row.columns, row.values.map(DeploymentExport.Value.init))
                                .filter { !computed.contains($0.0) })
                        try output(
                            String(
                                decoding: try encoder.encode(DeploymentExport.Line(table: table.name, row: values)),
                                as: UTF8.self))
                    }
                    if rows.count < DeploymentExport.rowsPerPage { break }
                    offset += rows.count
                }
            }
        }
    }

    /// Loads an export into this store, which must hold no user yet. The deployment's epoch
    /// comes along only with `keepEpoch` (the source was stopped before its export, so nothing
    /// is missing); otherwise this store keeps its own, and clients rebuild once. Returns the
    /// rows loaded.
    @discardableResult
    public func importDeployment(lines: some Sequence<String>, keepEpoch: Bool) throws -> Int {
        var iterator = lines.makeIterator()
        guard iterator.next()?.trimmingCharacters(in: .whitespacesAndNewlines) == DeploymentExport.header else {
            throw StoreError.validation("not a chatd export: the first line must be \(DeploymentExport.header)")
        }
        let known = Set(DeploymentExport.tables.map(\.name))
        let decoder = JSONDecoder()
        var count = 0
        var batch: [DeploymentExport.Line] = []
        func load() throws {
            try engine.write(
                { db in
                    if count == 0, let users: Int64 = try db.scalar("SELECT count(*) FROM users"), users > 0 {
                        throw StoreError.conflict("this store already holds users: import only into a new one")
                    }
                    for line in batch { try insert(line, into: db, keepEpoch: keepEpoch) }
                }, committed: {})
            count += batch.count
            batch = []
        }
        while let text = iterator.next() {
            guard !text.isEmpty else { continue }
            let line = try decoder.decode(DeploymentExport.Line.self, from: Data(text.utf8))
            guard known.contains(line.table) else {
                throw StoreError.validation("unknown table \(line.table) in the export")
            }
            batch.append(line)
            if batch.count == DeploymentExport.rowsPerPage { try load() }
        }
        try load()
        try engine.write(
            { db in
                // Every message has a kept-text row: one an export from before the table (its
                // `messages.body` dropped on the way in) lacks is built from its columns when read.
                try db.run(
                    """
                    INSERT INTO message_bodies(conversation_id, id) SELECT conversation_id, id FROM messages m
                    WHERE NOT EXISTS (SELECT 1 FROM message_bodies b WHERE b.conversation_id = m.conversation_id
                                                                      AND b.id = m.id)
                    """)
                // Each member of a one-to-one conversation keeps its time (`members_by_recency`):
                // members from an export made before the copy came in without one. A group's
                // members keep none (its time is its conversation's); an older export's copies go.
                try db.run(
                    """
                    UPDATE conversation_members SET updated_at = coalesce(
                        (SELECT c.updated_at FROM conversations c WHERE c.id = conversation_members.conversation_id), 0)
                    WHERE updated_at = 0 AND peer IS NOT NULL
                    """)
                try db.run("UPDATE conversation_members SET updated_at = 0 WHERE peer IS NULL AND updated_at != 0")
                try db.execute(Schema.openMissingSpans)
                try engine.importFinished(db)
            }, committed: {})
        return count
    }

    private func insert(_ line: DeploymentExport.Line, into db: any SQLDatabase, keepEpoch: Bool) throws {
        if line.table == "meta" {
            // The new store has its own epoch: replaced only when asked; other keys copied.
            guard case .text(let key)? = line.row["key"], case let value? = line.row["value"] else { return }
            if key == "epoch" && !keepEpoch { return }
            try db.run(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value.sqlValue])
            return
        }
        // An export from before `message_bodies` has each message's kept text in its row.
        let columns = line.row.keys.sorted().filter {
            (line.table != "messages" || $0 != "body") && DeploymentExport.computed[line.table]?.contains($0) != true
        }
        guard columns.allSatisfy({ $0.allSatisfy { $0.isLetter || $0 == "_" } }) else {
            throw StoreError.validation("a column name in the export is not one")
        }
        try db.run(
            "INSERT INTO \(line.table)(\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
            columns.map { line.row[$0]!.sqlValue })
    }
}
