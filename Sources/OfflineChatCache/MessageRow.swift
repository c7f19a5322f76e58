import OfflineChatProtocol
import OfflineChatSQLite

/// How a message is stored: its common fields as columns (a cached page is read without
/// JSON decoding in the usual case) and the rarer parts as one JSON text.
enum MessageRow {
    static let columns = """
        id, muid, conversation_id, parent_id, sender, receiver, receiver_type, category, type, text,
        sent_at, updated_at, edited_at, deleted_at, reply_count, call_status, extras
        """

    /// `col = ?n` for every column, numbered as in `columns`.
    private static let assignments = columns.split(separator: ",").enumerated()
        .map { "\($0.element.trimmingCharacters(in: .whitespacesAndNewlines)) = ?\($0.offset + 1)" }.joined(
            separator: ", ")
    private static let placeholders = Array(repeating: "?", count: 17).joined(separator: ", ")

    /// Refreshes a row with `values` (numbered as in `columns`) when the stored state is not
    /// newer, or takes over a queued message of the same sender and muid (whatever its local
    /// time: the server's copy wins).
    static let update = """
        UPDATE messages SET \(assignments)
        WHERE (id = ?1 AND updated_at <= ?12) OR (id IS NULL AND sender = ?5 AND muid = ?2)
        """

    /// Adds a row unless one with the id (or sender and muid) exists.
    static let insert = "INSERT OR IGNORE INTO messages(\(columns)) VALUES (\(placeholders))"

    /// Adds a queued message's row (its id is NULL; `local_id` is assigned).
    static let insertQueued = "INSERT INTO messages(\(columns)) VALUES (\(placeholders))"

    /// Turns the queued row `?18` into the sent message (values as in `columns`).
    static let completeQueued = "UPDATE messages SET \(assignments) WHERE local_id = ?18"

    /// The optional structured parts, stored only when a message has any.
    struct Extras: Codable {
        var attachment: Attachment?
        var customData: JSONValue?
        var metadata: [String: JSONValue]?
        var reactions: [ReactionCount]?
        var action: MemberActionPayload?
    }

    /// A message's values bound in place, ?1…?17 as in `columns`.
    static func bind(_ message: MessagePayload, to row: borrowing ParameterBinder) throws {
        try row.bind(1, message.id)
        try row.bind(2, message.muid)
        try row.bind(3, message.conversationId)
        try row.bind(4, message.parentMessageId)
        try row.bind(5, message.sender)
        try row.bind(6, message.receiver)
        try row.bind(7, message.receiverType.rawValue)
        try row.bind(8, message.category.rawValue)
        try row.bind(9, message.type)
        try row.bind(10, message.text)
        try row.bind(11, message.sentAt)
        try row.bind(12, message.updatedAt)
        try row.bind(13, message.editedAt)
        try row.bind(14, message.deletedAt)
        try row.bind(15, Int64(message.replyCount ?? 0))
        try row.bind(16, message.callStatus?.rawValue)
        try row.bind(17, try extras(message))
    }

    /// The JSON of the rarer parts, nil when a message has none.
    private static func extras(_ message: MessagePayload) throws -> String? {
        guard
            message.attachment != nil || message.customData != nil || message.metadata != nil
                || message.reactions != nil
                || message.action != nil
        else { return nil }
        return try ChatCache.json(
            Extras(
                attachment: message.attachment, customData: message.customData, metadata: message.metadata,
                reactions: message.reactions, action: message.action))
    }

    /// `message` as it reads back from its row (a reply count of 0 is stored as none).
    static func asStored(_ message: MessagePayload) -> MessagePayload {
        var stored = message
        if stored.replyCount == 0 { stored.replyCount = nil }
        return stored
    }

    /// A message from the current row of a statement selecting `columns` (starting at column
    /// `offset`): the fast path.
    static func message(_ row: borrowing RowCursor, offset: Int32 = 0) throws -> MessagePayload {
        let extras = try row.textOrNil(offset + 16).map { try ChatCache.decode(Extras.self, $0) }
        let replies = row.int(offset + 14)
        return MessagePayload(
            id: row.int64(offset), muid: row.textOrNil(offset + 1), conversationId: row.text(offset + 2),
            sender: row.text(offset + 4),
            receiver: row.text(offset + 5), receiverType: ReceiverType(rawValue: row.text(offset + 6)) ?? .user,
            category: MessageCategory(rawValue: row.text(offset + 7)) ?? .message, type: row.text(offset + 8),
            text: row.textOrNil(offset + 9), attachment: extras?.attachment, customData: extras?.customData,
            metadata: extras?.metadata,
            sentAt: row.int64(offset + 10), updatedAt: row.int64(offset + 11), editedAt: row.int64OrNil(offset + 12),
            deletedAt: row.int64OrNil(offset + 13), reactions: extras?.reactions,
            parentMessageId: row.int64OrNil(offset + 3),
            replyCount: replies == 0 ? nil : replies,
            callStatus: row.textOrNil(offset + 15).flatMap(CallStatus.init(rawValue:)),
            action: extras?.action)
    }

    /// A message from a row selected with `columns` (starting at column `offset`).
    static func message(_ row: Row, offset: Int = 0) throws -> MessagePayload {
        func get<T: SQLValueConvertible>(_ index: Int, as type: T.Type = T.self) throws -> T {
            try row.get(offset + index, as: type)
        }
        let extras = try (try get(16, as: String?.self)).map { try ChatCache.decode(Extras.self, $0) }
        let replies: Int = try get(14)
        return MessagePayload(
            id: try get(0, as: Int64?.self) ?? 0, muid: try get(1), conversationId: try get(2), sender: try get(4),
            receiver: try get(5), receiverType: ReceiverType(rawValue: try get(6)) ?? .user,
            category: MessageCategory(rawValue: try get(7)) ?? .message, type: try get(8), text: try get(9),
            attachment: extras?.attachment, customData: extras?.customData, metadata: extras?.metadata,
            sentAt: try get(10), updatedAt: try get(11), editedAt: try get(12), deletedAt: try get(13),
            reactions: extras?.reactions, parentMessageId: try get(3), replyCount: replies == 0 ? nil : replies,
            callStatus: (try get(15, as: String?.self)).flatMap(CallStatus.init(rawValue:)), action: extras?.action)
    }
}
