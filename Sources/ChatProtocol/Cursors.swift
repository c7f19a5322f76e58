/// The changelog cursor, `c1.<sequence>`: opaque to clients, parsed only by chatd.
public enum ChangelogCursor {
    public static func encode(_ sequence: Int64) -> String { "c1.\(sequence)" }

    /// The sequence in `cursor`, nil when it is not one chatd issues.
    public static func parse(_ cursor: String) -> Int64? {
        guard cursor.hasPrefix("c1."), let sequence = Int64(cursor.dropFirst(3)), sequence >= 0 else { return nil }
        return sequence
    }
}

/// The conversation list's page cursor, `<updatedAt>:<conversation id>`.
public enum ConversationListCursor {
    public static func encode(updatedAt: Int64, conversationId: String) -> String { "\(updatedAt):\(conversationId)" }

    /// The position in `cursor`, nil when it is not one chatd issues.
    public static func parse(_ cursor: String) -> (updatedAt: Int64, conversationId: String)? {
        guard let colon = cursor.firstIndex(of: ":"), let time = Int64(cursor[..<colon]) else { return nil }
        return (time, String(cursor[cursor.index(after: colon)...]))
    }
}
