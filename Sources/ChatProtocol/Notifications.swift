/// One item of a user's notification feed (`GET /v1/notifications`).
public struct FeedItemPayload: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        /// Someone mentioned the user (`<@uid:UID>` in a message's text).
        case mention
        /// Someone replied in a thread under the user's message.
        case reply
        /// Someone reacted to the user's message.
        case reaction
    }

    /// Increases with every item; the feed pages by it, newest first.
    public var id: Int64
    public var kind: Kind
    /// Who did it.
    public var actor: String
    /// The message that mentions or replies, or the user's message that got the reaction.
    public var messageId: Int64
    public var conversationId: String
    /// The reaction, for `reaction` items.
    public var reaction: String?
    /// Epoch milliseconds.
    public var at: Int64

    public init(id: Int64, kind: Kind, actor: String, messageId: Int64, conversationId: String, reaction: String?, at: Int64) {
        self.id = id
        self.kind = kind
        self.actor = actor
        self.messageId = messageId
        self.conversationId = conversationId
        self.reaction = reaction
        self.at = at
    }

    /// The uids mentioned in `text` as `<@uid:UID>`, in order, without repeats.
    public static func mentions(in text: String) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        let marker = Array("<@uid:")
        while let start = rest.firstRange(of: marker) {
            let tail = rest[start.upperBound...]
            guard let end = tail.firstIndex(of: ">") else { break }
            let uid = String(tail[..<end])
            if !uid.isEmpty && !found.contains(uid) { found.append(uid) }
            rest = tail[tail.index(after: end)...]
        }
        return found
    }
}
