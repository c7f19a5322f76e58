import Foundation
import OfflineChat

extension FakeChatd {
    /// The SDK's HTTP requests, answered in process.
    struct HTTP: HTTPTransport {
        let server: FakeChatd

        func send(
            method: String, url: URL, headers: [String: String], body: Data?, maxBytes: Int
        ) async throws -> HTTPAnswer {
            try server.answer(method, url, headers: headers, body: body)
        }
    }

    func answer(_ method: String, _ url: URL, headers: [String: String], body: Data?) throws -> HTTPAnswer {
        let path = url.path
        let query = Dictionary(
            (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map {
                ($0.name, $0.value ?? "")
            }, uniquingKeysWith: { $1 })
        let token = headers.first { $0.key.lowercased() == "authorization" }?.value.replacingOccurrences(
            of: "Bearer ", with: "")
        let (reachable, scripted, caller) = state.withLock { state in
            state.requests.append("\(method) \(path)" + (url.query.map { "?\($0)" } ?? ""))
            return (state.reachable, state.scripted["\(method) \(path)"], token.flatMap { state.tokens[$0] })
        }
        guard reachable else {
            throw ChatException(
                errorCode: ChatException.internetUnavailable, errorDescription: "FakeChatd is unreachable")
        }
        if let scripted { return scripted }
        guard let uid = caller else { return Self.error(401, .unauthorized, "no such token") }
        let parts = path.split(separator: "/").map(String.init)
        switch (method, path) {
        case ("GET", Endpoints.me):
            return Self.ok(state.withLock { $0.users[uid] })
        case ("DELETE", Endpoints.meToken):
            _ = state.withLock { $0.tokens.removeValue(forKey: token ?? "") }
            return HTTPAnswer(status: 204, body: Data())
        case ("POST", Endpoints.messages):
            guard let body, let request = try? JSONDecoder().decode(SendMessageRequest.self, from: body) else {
                return Self.error(422, .validationFailed, "not a message")
            }
            guard request.receiverType == .user, state.withLock({ $0.users[request.receiver] != nil }) else {
                return Self.error(404, .notFound, "no such user (FakeChatd has no groups)")
            }
            return Self.ok(store(request, from: uid))
        case ("GET", Endpoints.changes):
            return changes(of: uid, after: query["cursor"] ?? "", limit: Int(query["limit"] ?? "") ?? 100)
        case ("POST", Endpoints.changes):
            guard let body, let request = try? JSONDecoder().decode(ChangesRequest.self, from: body) else {
                return Self.error(422, .validationFailed, "not a changes request")
            }
            return changes(of: uid, after: request.cursor ?? "", limit: request.limit ?? 100)
        case ("GET", Endpoints.conversations):
            return Self.ok(Page(items: conversations(of: uid), next: nil))
        case ("GET", _)
        where parts.count == 4 && "/\(parts[0])/\(parts[1])" == Endpoints.conversations
            && parts[3] == "messages":
            return Self.ok(history(of: parts[2], for: uid, query: query))
        default:
            return Self.error(404, .notFound, "FakeChatd does not serve \(method) \(path)")
        }
    }

    /// `GET /v1/changes`: an empty cursor answers the head.
    private func changes(of uid: String, after cursor: String, limit: Int) -> HTTPAnswer {
        let serverTime = clock.now() / 1000
        return state.withLock { state in
            let all = state.changes[uid, default: []]
            guard !cursor.isEmpty else {
                return Self.ok(
                    ChangelogPage(changes: [], hasMore: false, cursor: "\(all.count)", serverTime: serverTime))
            }
            guard let after = Int(cursor), (0...all.count).contains(after) else {
                return Self.error(400, .invalidCursor, "not a cursor of this server")
            }
            let page = Array(all.dropFirst(after).prefix(max(1, min(limit, ChangelogPage.maxLimit))))
            return Self.ok(
                ChangelogPage(
                    changes: page, hasMore: after + page.count < all.count, cursor: "\(after + page.count)",
                    serverTime: serverTime))
        }
    }

    /// `uid`'s one-to-one conversations, newest activity first.
    private func conversations(of uid: String) -> [ConversationPayload] {
        state.withLock { state in
            let mine = state.messages.filter { $0.sender == uid || $0.receiver == uid }
            return Dictionary(grouping: mine, by: \.conversationId).values.compactMap { messages in
                guard let last = messages.max(by: { $0.id < $1.id }) else { return nil }
                let peer = last.sender == uid ? last.receiver : last.sender
                return ConversationPayload(
                    conversationId: last.conversationId, conversationType: .user,
                    conversationWith: .user(state.users[peer] ?? UserPayload(uid: peer, name: peer)),
                    lastMessage: last, unreadMessageCount: messages.filter { $0.sender != uid }.count,
                    lastDeliveredMessageId: nil, lastReadMessageId: nil, peerDeliveredMessageId: nil,
                    peerReadMessageId: nil, updatedAt: last.updatedAt)
            }.sorted {
                $0.updatedAt > $1.updatedAt || ($0.updatedAt == $1.updatedAt && $0.conversationId < $1.conversationId)
            }
        }
    }

    /// A page of one conversation's messages, oldest first: the newest `limit` (before `before`,
    /// if given), or the oldest `limit` after `after`.
    private func history(of conversation: String, for uid: String, query: [String: String]) -> [MessagePayload] {
        let limit = max(1, min(Int(query["limit"] ?? "") ?? 30, 100))
        let messages = state.withLock { state in
            state.messages.filter {
                $0.conversationId == conversation && ($0.sender == uid || $0.receiver == uid)
            }
        }
        if let after = query["after"].flatMap(Int64.init) {
            return Array(messages.filter { $0.id > after }.prefix(limit))
        }
        let before = query["before"].flatMap(Int64.init) ?? .max
        return Array(messages.filter { $0.id < before }.suffix(limit))
    }

    static func ok(_ value: some Encodable) -> HTTPAnswer {
        HTTPAnswer(status: 200, headers: ["content-type": "application/json"], body: Data(json(value).utf8))
    }

    static func error(_ status: Int, _ code: ErrorCode, _ message: String) -> HTTPAnswer {
        HTTPAnswer(status: status, body: Data(json(APIError(code: code, message: message)).utf8))
    }
}
