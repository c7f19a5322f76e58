import OfflineChatSQLite

/// What `GET /v1/conversations/{id}/messages` and `GET /v1/messages/{id}/thread` ask for:
/// a scope, an anchor with a direction, and the `MessagesRequest` builder's filters.
public struct MessageQuery: Sendable {
    public enum Scope: Sendable {
        case conversation(String)
        /// The replies to one message.
        case thread(parentId: Int64)
    }

    public var scope: Scope
    public var limit = 30
    /// Anchors by message id: newer than `afterId`, older than `beforeId`.
    public var afterId: Int64?
    public var beforeId: Int64?
    /// Anchors by send time, epoch milliseconds.
    public var sentAfter: Int64?
    public var sentBefore: Int64?
    /// Only these categories / types (empty: all).
    public var categories: [String] = []
    public var types: [String] = []
    public var hideReplies = false
    public var hideDeleted = false
    /// Case-insensitive substring of the text.
    public var searchKeyword: String?
    /// Only messages whose text contains a link.
    public var hasLinks = false
    /// Only messages changed after this time (epoch milliseconds)…
    public var updatedAfter: Int64?
    /// …and, with `updatesOnly`, only those that were edited or deleted (not merely new).
    public var updatesOnly = false
    /// Only messages from this sender.
    public var sender: String?

    public init(scope: Scope) { self.scope = scope }

    /// Forward queries (after an anchor) page oldest-first; everything else newest-first.
    var newestFirst: Bool { afterId == nil && sentAfter == nil && updatedAfter == nil }

    /// SQL conditions with their arguments, in order, and whether they are a conversation's
    /// message-id anchors alone (no filter: the kept texts answer such a page by themselves,
    /// `Store.keptPage`).
    func whereClause() throws -> (clause: String, arguments: [any SQLValueConvertible], onlyAnchors: Bool) {
        var conditions = SQLConditions()
        func add(_ condition: String, _ values: [any SQLValueConvertible] = []) { conditions.add(condition, values) }
        switch scope {
        case .conversation(let id): add("conversation_id = ?", [id])
        case .thread(let parentId): add("parent_id = ?", [parentId])
        }
        if let afterId { add("id > ?", [afterId]) }
        if let beforeId { add("id < ?", [beforeId]) }
        let anchors = conditions.conditions.count
        if let sentAfter { add("sent_at > ?", [sentAfter]) }
        if let sentBefore { add("sent_at < ?", [sentBefore]) }
        try conditions.oneOf("category", categories)
        try conditions.oneOf("type", types)
        if hideReplies { add("parent_id IS NULL") }
        if hideDeleted { add("deleted_at IS NULL") }
        conditions.keyword(searchKeyword, in: ["text"])
        if hasLinks { add("(text LIKE '%http://%' OR text LIKE '%https://%' OR text LIKE '%www.%')") }
        if let updatedAfter { add("updated_at > ?", [updatedAfter]) }
        if updatesOnly { add("(edited_at IS NOT NULL OR deleted_at IS NOT NULL)") }
        if let sender { add("sender = ?", [sender]) }
        let isConversation = if case .conversation = scope { true } else { false }
        return (conditions.clause, conditions.arguments, isConversation && conditions.conditions.count == anchors)
    }

    /// Makes `%`, `_` and `\` match themselves in a LIKE pattern (scalar by scalar: a
    /// combining mark after `%` must not hide it).
    static func escapeLike(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "%" || scalar == "_" { escaped.append("\\") }
            escaped.append(scalar)
        }
        return String(escaped)
    }
}
