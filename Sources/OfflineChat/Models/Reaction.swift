/// One user's reaction to a message.
public struct Reaction: Sendable, Equatable {
    public var id: Int64
    public var messageId: Int64
    public var uid: String
    public var reaction: String
    /// Epoch milliseconds.
    public var reactedAt: Int64

    init(_ payload: ReactionPayload) {
        id = payload.id
        messageId = payload.messageId
        uid = payload.uid
        reaction = payload.reaction
        reactedAt = payload.reactedAt
    }
}

/// One item of the logged-in user's notification feed: a mention, a thread reply to one of
/// their messages, or a reaction to one.
public struct NotificationFeedItem: Sendable, Equatable {
    public typealias Kind = FeedItemPayload.Kind
    public var id: Int64
    public var kind: Kind
    /// Who did it.
    public var actor: String
    public var messageId: Int64
    public var conversationId: String
    public var reaction: String?
    /// Epoch milliseconds.
    public var at: Int64

    init(_ payload: FeedItemPayload) {
        id = payload.id
        kind = payload.kind
        actor = payload.actor
        messageId = payload.messageId
        conversationId = payload.conversationId
        reaction = payload.reaction
        at = payload.at
    }
}
