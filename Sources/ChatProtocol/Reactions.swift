/// One reaction and how many users reacted with it.
public struct ReactionCount: Codable, Sendable, Equatable {
    public var reaction: String
    public var count: Int
    public init(reaction: String, count: Int) {
        self.reaction = reaction
        self.count = count
    }
}

/// One user's reaction to a message.
public struct ReactionPayload: Codable, Sendable, Equatable {
    /// Increases with every reaction added; the reactions list pages by it.
    public var id: Int64
    public var messageId: Int64
    public var uid: String
    public var reaction: String
    /// Epoch milliseconds.
    public var reactedAt: Int64
    public init(id: Int64, messageId: Int64, uid: String, reaction: String, reactedAt: Int64) {
        self.id = id
        self.messageId = messageId
        self.uid = uid
        self.reaction = reaction
        self.reactedAt = reactedAt
    }
}

/// `POST /v1/messages/{id}/reactions` body.
public struct AddReactionRequest: Codable, Sendable {
    public var reaction: String
    public init(reaction: String) { self.reaction = reaction }
}
