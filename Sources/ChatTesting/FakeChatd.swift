import Foundation
import OfflineChat
import OfflineChatLocking

/// chatd's stand-in inside a test process, for an app's own tests: no server process, no
/// network, no waiting. It keeps users, one-to-one text messages, each user's changelog and
/// realtime sockets in memory, and answers the SDK through its transports
/// (`ChatConfig.httpTransport`, `ChatConfig.realtimeTransport`; `configure(_:)` sets both):
///
/// - `GET /v1/me`, `DELETE /v1/me/token`;
/// - `POST /v1/messages` (to users; a repeated muid answers the first message), pushed live to
///   the sockets of both sides;
/// - `GET /v1/changes` (the catch-up sync), `GET /v1/conversations` (one-to-one conversations
///   built from the messages; every message from the other side counts as unread) and
///   `GET /v1/conversations/{id}/messages` (`before`, `after`, `limit`).
///
/// Anything else answers 404 `not_found` unless the test scripted an answer (`answer(_:_:…)`);
/// a scripted answer also wins over the built-in ones, so a test can fail any request. Set
/// `isReachable` to false to take the network away: requests fail as offline, open sockets drop
/// and new ones do not open. `deliver(text:from:to:)` is another user's message arriving.
///
/// It is a stand-in, not chatd: no groups, receipts, reactions, edits, media or rate limits.
/// Tests of those belong against the real server (`LiveChatd`).
public final class FakeChatd: Sendable {
    /// The base URL to use as `ChatConfig.server` (never resolved: requests go through the
    /// transports).
    public let url = URL(string: "http://fake-chatd.invalid")!
    let clock: any ChatClock
    let state = Locked(State())

    struct State {
        var users: [String: UserPayload] = [:]
        /// Bearer token → uid.
        var tokens: [String: String] = [:]
        /// Every message, in id order (id = index + 1).
        var messages: [MessagePayload] = []
        /// Each user's changelog; a change's `seq` is its index + 1.
        var changes: [String: [ChangePayload]] = [:]
        var sockets: [Int: FakeRealtimeSocket] = [:]
        var nextSocket = 0
        var reachable = true
        /// "METHOD path" → answer.
        var scripted: [String: HTTPAnswer] = [:]
        /// "METHOD path?query", in arrival order.
        var requests: [String] = []
    }

    /// An empty server reading time from `clock` (a `ManualClock` in tests that move time).
    public init(clock: any ChatClock = SystemClock()) { self.clock = clock }

    /// Points `config` at this server: its `server`, `httpTransport` and `realtimeTransport`.
    public func configure(_ config: inout ChatConfig) {
        config.server = url
        config.httpTransport = HTTP(server: self)
        config.realtimeTransport = Realtime(server: self)
    }

    /// Creates a user (name: the uid unless given) and returns a token to log in with.
    @discardableResult
    public func addUser(_ uid: String, name: String? = nil) -> String {
        state.withLock { $0.users[uid] = UserPayload(uid: uid, name: name ?? uid) }
        return token(for: uid)
    }

    /// A new token for `uid` (a logout revokes only the token it was made with).
    public func token(for uid: String) -> String {
        let token = "fake-token-\(uid)-\(UUID().uuidString)"
        state.withLock { $0.tokens[token] = uid }
        return token
    }

    /// Whether the network reaches the server. False: every request fails with
    /// `ERROR_INTERNET_UNAVAILABLE`, open realtime sockets drop, new ones fail to open.
    public var isReachable: Bool {
        get { state.withLock { $0.reachable } }
        set {
            let dropped = state.withLock { state in
                state.reachable = newValue
                guard !newValue else { return [FakeRealtimeSocket]() }
                defer { state.sockets = [:] }
                return Array(state.sockets.values)
            }
            for socket in dropped { socket.drop() }
        }
    }

    /// Answers `method` `path` (no query) with `json` from now on, instead of the built-in
    /// behaviour.
    public func answer(_ method: String, _ path: String, status: Int = 200, json: some Encodable) {
        let body = (try? JSONEncoder().encode(json)) ?? Data()
        state.withLock { $0.scripted["\(method) \(path)"] = HTTPAnswer(status: status, body: body) }
    }

    /// Fails `method` `path` from now on with chatd's error shape (`code`, `message`).
    public func fail(_ method: String, _ path: String, status: Int, code: ErrorCode, message: String = "scripted") {
        answer(method, path, status: status, json: APIError(code: code, message: message))
    }

    /// Takes a scripted answer away: the built-in behaviour (or 404) answers again.
    public func removeAnswer(_ method: String, _ path: String) {
        _ = state.withLock { $0.scripted.removeValue(forKey: "\(method) \(path)") }
    }

    /// Every request so far, as `METHOD path?query`, in arrival order.
    public var requests: [String] { state.withLock { $0.requests } }

    /// Every message the server holds, in id order.
    public var messages: [MessagePayload] { state.withLock { $0.messages } }

    /// `sender`'s `text` to `receiver`, as if `sender`'s own app had sent it: stored, in both
    /// changelogs, and pushed to both sides' open sockets.
    @discardableResult
    public func deliver(text: String, from sender: String, to receiver: String) -> MessagePayload {
        store(SendMessageRequest(muid: UUID().uuidString, receiver: receiver, text: text), from: sender)
    }

    /// The conversation id of `a` and `b` (as chatd makes it).
    public static func conversationID(_ a: String, _ b: String) -> String { [a, b].sorted().joined(separator: "~") }

    /// Stores a send (or finds the one with its muid) and publishes it.
    func store(_ request: SendMessageRequest, from sender: String) -> MessagePayload {
        let now = clock.now()
        // Pushed under the lock (a yield never blocks): each socket gets its changes in order.
        return state.withLock { state in
            if let earlier = state.messages.first(where: { $0.sender == sender && $0.muid == request.muid }) {
                return earlier
            }
            let message = MessagePayload(
                id: Int64(state.messages.count + 1), muid: request.muid,
                conversationId: Self.conversationID(sender, request.receiver), sender: sender,
                receiver: request.receiver, receiverType: .user, category: request.category, type: request.type,
                text: request.text, attachment: request.attachment, customData: request.customData,
                metadata: request.metadata, sentAt: now, updatedAt: now, editedAt: nil, deletedAt: nil,
                parentMessageId: request.parentMessageId)
            state.messages.append(message)
            for uid in Set([sender, request.receiver]) {
                let seq = Int64(state.changes[uid, default: []].count + 1)
                let change = ChangePayload(
                    seq: seq, kind: .messageCreated, conversationId: message.conversationId, message: message, at: now)
                state.changes[uid, default: []].append(change)
                let frame = Self.json(RealtimeEnvelope(type: .change, cursor: "\(seq)", change: change))
                for socket in state.sockets.values where socket.uid == uid { socket.push(frame) }
            }
            return message
        }
    }

    static func json(_ value: some Encodable) -> String {
        String(decoding: (try? JSONEncoder().encode(value)) ?? Data(), as: UTF8.self)
    }
}
