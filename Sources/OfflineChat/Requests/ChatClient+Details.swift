import Foundation
import OfflineChatCache

/// The answer to `getConversation`: the cached copy only on a hit, then the server's.
public protocol ConversationDetailsListener: AnyObject {
    /// The cached copy; first, and only when the conversation is cached.
    func onCachedConversation(_ conversation: Conversation)
    /// The server's copy (already written to the cache).
    func onServerConversation(_ conversation: Conversation?)
    /// The server phase failed (for a cache hit, after `onCachedConversation`).
    func onError(_ error: ChatException?)
}

/// The answer to `getMessageDetails`: the cached copy only on a hit, then the server's.
public protocol MessageDetailsListener: AnyObject {
    /// The cached copy; first, and only when the message is cached.
    func onCachedMessage(_ message: BaseMessage)
    /// The server's copy (already written to the cache).
    func onServerMessage(_ message: BaseMessage?)
    /// The server phase failed (for a cache hit, after `onCachedMessage`).
    func onError(_ error: ChatException?)
}

extension ChatClient {
    /// One conversation, in two phases. The cached callback fires only when the
    /// conversation is cached; a miss goes straight to the server online, or to `onError`
    /// offline. The SDK keeps `listener` alive until the lookup settles.
    public func getConversation(
        conversationWith: String, conversationType: ReceiverType, listener: any ConversationDetailsListener
    ) {
        let holder = ListenerHolder(listener)
        guard let me = getLoggedInUser()?.uid else {
            config.callbackQueue.async { holder.conversation?.onError(.notLoggedIn()) }
            return
        }
        let id =
            conversationType == .group
            ? ConversationPayload.groupID(conversationWith) : ConversationPayload.directID(me, conversationWith)
        single(
            cached: { cache in try cache.conversation(id: id).map { Conversation($0, source: .cache) } },
            server: { session in
                let payload: ConversationPayload = try await session.api.get("\(Endpoints.conversations)/\(id)")
                self.keep { try session.cache?.storeConversation(payload) }
                return Conversation(payload, source: .server)
            },
            onCached: { holder.conversation?.onCachedConversation($0) },
            onServer: { holder.conversation?.onServerConversation($0) },
            onError: { holder.conversation?.onError($0) })
    }

    /// One message, in two phases (cached only on a hit).
    public func getMessageDetails(_ id: Int64, listener: any MessageDetailsListener) {
        let holder = ListenerHolder(listener)
        single(
            cached: { cache in try cache.message(id: id).map { BaseMessage.make($0, source: .cache) } },
            server: { session in
                let payload: MessagePayload = try await session.api.get("\(Endpoints.messages)/\(id)")
                self.keep { try session.cache?.storeUpdates([payload]) }
                return BaseMessage.make(payload, source: .server)
            },
            onCached: { holder.message?.onCachedMessage($0) },
            onServer: { holder.message?.onServerMessage($0) },
            onError: { holder.message?.onError($0) })
    }

    /// A single-item two-phase read: the cached phase only on a hit; offline with a miss, the
    /// error alone.
    func single<Item: Sendable>(
        cached: @escaping @Sendable (ChatCache) throws -> Item?,
        server: @escaping @Sendable (UserSession) async throws -> Item,
        onCached: @escaping @Sendable (Item) -> Void, onServer: @escaping @Sendable (Item) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        twoPhase(
            cached: { cache in try cached(cache).map { [$0] } ?? [] },
            server: { session in [try await server(session)] },
            onCached: { items in if let item = items.first { onCached(item) } },
            onServer: { items in if let item = items.first { onServer(item) } },
            onError: onError)
    }
}

/// Keeps a lookup's listener alive until the lookup settles, and hands it over on the
/// callback queue only (hence `@unchecked Sendable`).
final class ListenerHolder: @unchecked Sendable {
    private let listener: AnyObject
    init(_ listener: AnyObject) { self.listener = listener }
    var conversation: (any ConversationDetailsListener)? { listener as? any ConversationDetailsListener }
    var message: (any MessageDetailsListener)? { listener as? any MessageDetailsListener }
}
