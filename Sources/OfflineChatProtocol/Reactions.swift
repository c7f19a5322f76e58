/// One reaction and how many users reacted with it.
public struct ReactionCount: Codable, Sendable, Equatable {
    /// The reaction, e.g. an emoji.
    public var reaction: String
    /// How many users reacted with it (at least 1).
    public var count: Int
    /// Creates a count with every field.
    public init(reaction: String, count: Int) {
        self.reaction = reaction
        self.count = count
    }
}

/// One user's reaction to a message.
public struct ReactionPayload: Codable, Sendable, Equatable {
    /// Increases with every reaction added; the reactions list pages by it.
    public var id: Int64
    /// The message reacted to.
    public var messageId: Int64
    /// The user who reacted.
    public var uid: String
    /// The reaction, e.g. an emoji.
    public var reaction: String
    /// Epoch milliseconds.
    public var reactedAt: Int64
    /// Creates a reaction with every field.
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
    /// The reaction to add, e.g. an emoji (no `/`).
    public var reaction: String
    /// Creates a request for `reaction`.
    public init(reaction: String) { self.reaction = reaction }
}
