import Foundation
import OfflineChatProtocol

extension ChatdUnderTest {
    /// Creates a group owned by `token`'s user and returns it.
    @discardableResult
    func group(
        _ guid: String, _ type: GroupType = .public, password: String? = nil, tags: [String]? = nil,
        name: String? = nil, by token: String
    ) async throws -> GroupPayload {
        let reply = try await request(
            "POST", Endpoints.groups, token: token,
            json: CreateGroupRequest(guid: guid, name: name ?? guid, type: type, password: password, tags: tags))
        guard reply.status == 201 else {
            throw LiveServer.Failure(
                "create group \(guid): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        return try reply.decode()
    }

    /// Adds `uid` to a group with `scope`, as `token`'s user; returns the status.
    @discardableResult
    func addMember(
        _ uid: String, to guid: String, scope: GroupScope = .participant, by token: String
    ) async throws -> Int {
        try await request(
            "POST", "\(Endpoints.groups)/\(guid)/members", token: token, json: AddMemberRequest(uid: uid, scope: scope)
        ).status
    }

    /// Sends a text message to a group and returns the reply.
    func sendToGroup(_ text: String, from token: String, to guid: String) async throws -> Reply {
        try await request(
            "POST", Endpoints.messages, token: token,
            json: SendMessageRequest(muid: UUID().uuidString, receiver: guid, receiverType: .group, text: text))
    }

    /// Every message of a group's conversation, oldest first.
    func groupMessages(_ guid: String, token: String, query: String = "") async throws -> Reply {
        try await request(
            "GET", "\(Endpoints.conversations)/\(ConversationPayload.groupID(guid))/messages?limit=100\(query)",
            token: token)
    }
}
