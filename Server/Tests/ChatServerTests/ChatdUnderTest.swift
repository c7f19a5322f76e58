import Foundation
import OfflineChatProtocol

/// A chatd a test talks to: the real process (`LiveServer`) or its router in the test process
/// (`InProcessServer`). The helpers below work on either.
protocol ChatdUnderTest: Sendable {
    /// One HTTP request (`request(…)` below fills in the defaults); `admin` adds the admin key.
    func perform(
        _ method: String, _ path: String, token: String?, admin: Bool, body: Data?, headers: [String: String]
    ) async throws -> Reply
}

extension ChatdUnderTest {
    func request(
        _ method: String, _ path: String, token: String? = nil, admin: Bool = false, body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> Reply {
        try await perform(method, path, token: token, admin: admin, body: body, headers: headers)
    }

    func request(
        _ method: String, _ path: String, token: String? = nil, admin: Bool = false,
        json: some Encodable
    ) async throws -> Reply {
        try await request(method, path, token: token, admin: admin, body: try JSONEncoder().encode(json))
    }

    /// A cursor at the start of the caller's log: a page from it gives every change of
    /// theirs and of their groups within their memberships.
    func beginning(_ token: String) async throws -> String {
        let head = try await request("GET", Endpoints.changes, token: token).decode(ChangelogPage.self).cursor
        guard case .logs(let epoch, _, _) = ChangelogCursor.parse(head) else {
            throw LiveServer.Failure("not a c3 head cursor: \(head)")
        }
        return ChangelogCursor.encode(epoch: epoch, position: 0, groups: [:])
    }

    /// Creates a user and returns a fresh token for them.
    func user(_ uid: String, name: String? = nil) async throws -> String {
        let created = try await request(
            "POST", Endpoints.adminUsers, admin: true, json: CreateUserRequest(uid: uid, name: name))
        guard created.status == 201 else {
            throw LiveServer.Failure(
                "create \(uid): \(created.status) \(String(decoding: created.body, as: UTF8.self))")
        }
        return try await token(uid)
    }

    func token(_ uid: String, ttlSeconds: Int64? = nil) async throws -> String {
        let reply = try await request(
            "POST", "\(Endpoints.adminUsers)/\(uid)/tokens", admin: true,
            json: CreateTokenRequest(ttlSeconds: ttlSeconds))
        return try reply.decode(TokenResponse.self).authToken
    }

    /// Sends a text message and returns the stored message.
    @discardableResult
    func send(
        _ text: String, from token: String, to receiver: String, muid: String = UUID().uuidString
    ) async throws -> MessagePayload {
        let reply = try await request(
            "POST", Endpoints.messages, token: token,
            json: SendMessageRequest(muid: muid, receiver: receiver, text: text))
        guard reply.status == 201 || reply.status == 200 else {
            throw LiveServer.Failure("send: \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        return try reply.decode()
    }

    /// The ids of `token`'s whole conversation list, read in pages of `pageSize` (each later page
    /// from the position the one before ended at), at most 50.
    func conversationIds(_ token: String, pageSize: Int) async throws -> [String] {
        var listed: [String] = []
        var cursor: String?
        repeat {
            let query = "?limit=\(pageSize)" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try await request("GET", Endpoints.conversations + query, token: token).decode(
                Page<ConversationPayload>.self)
            listed += page.items.map(\.conversationId)
            cursor = page.next
        } while cursor != nil && listed.count < 50
        return listed
    }

    /// Uploads `bytes` as `token`'s media and returns the attachment to send.
    func upload(
        _ bytes: Data, by token: String, contentType: String = "image/png", name: String = "file"
    ) async throws -> OfflineChatProtocol.Attachment {
        let reply = try await request(
            "POST", Endpoints.media + "?name=" + name, token: token, body: bytes,
            headers: ["Content-Type": contentType])
        guard reply.status == 201 else {
            throw LiveServer.Failure("upload: \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        return try reply.decode()
    }

    func advanceClock(seconds: Int64) async throws {
        let reply = try await request("POST", "/v1/admin/clock", admin: true, json: ["advanceSeconds": seconds])
        guard reply.status == 200 else { throw LiveServer.Failure("clock: \(reply.status)") }
    }
}
