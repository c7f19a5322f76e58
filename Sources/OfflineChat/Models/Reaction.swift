/// One user's reaction to a message.
public struct Reaction: Sendable, Equatable {
    /// The server's id (pages are ordered by it).
    public var id: Int64
    /// The message reacted to.
    public var messageId: Int64
    /// Who reacted.
    public var uid: String
    /// The reaction, e.g. an emoji.
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
    /// A mention, a reply or a reaction.
    public typealias Kind = FeedItemPayload.Kind
    /// The feed's id for it (pages are ordered by it).
    public var id: Int64
    /// What happened.
    public var kind: Kind
    /// Who did it.
    public var actor: String
    /// The message it is about.
    public var messageId: Int64
    /// Where.
    public var conversationId: String
    /// The reaction, for a reaction.
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
