import Foundation
import OfflineChatCache

/// Changes to existing messages. They need a connection: offline they fail at once with
/// `ERROR_INTERNET_UNAVAILABLE` and change nothing. The server's answer is written through.
extension ChatClient {
    /// Replaces the text of one's own message.
    @discardableResult
    public func editMessage(_ id: Int64, text: String) async throws -> BaseMessage {
        try await change("PATCH", "\(Endpoints.messages)/\(id)", body: EditMessageRequest(text: text))
    }

    /// Deletes a message (one's own; in a group, moderators may delete anyone's).
    @discardableResult
    public func deleteMessage(_ id: Int64) async throws -> BaseMessage {
        try await change("DELETE", "\(Endpoints.messages)/\(id)", body: nil as String?)
    }

    /// Adds the user's `reaction` to message `id` and returns the message with its new counts.
    /// Needs a connection.
    @discardableResult
    public func addReaction(_ reaction: String, to id: Int64) async throws -> BaseMessage {
        try await change("POST", "\(Endpoints.messages)/\(id)/reactions", body: AddReactionRequest(reaction: reaction))
    }

    /// Removes the user's `reaction` from message `id` and returns the message with its new
    /// counts. Needs a connection.
    @discardableResult
    public func removeReaction(_ reaction: String, from id: Int64) async throws -> BaseMessage {
        // APIClient percent-encodes the path.
        try await change("DELETE", "\(Endpoints.messages)/\(id)/reactions/\(reaction)", body: nil as String?)
    }

    private func change<Body: Encodable & Sendable>(
        _ method: String, _ path: String, body: Body?
    ) async throws -> BaseMessage {
        let current = try requireSession()
        guard current.realtime.status == .connected else {
            throw ChatException.offline("edits, deletions and reactions need a connection")
        }
        // A 401 ends the session where the API client met it (`AuthRejection`).
        let payload: MessagePayload = try await current.api.send(method, path, body: body)
        try? current.cache?.storeUpdates([payload])
        return BaseMessage.make(payload, source: .server)
    }
}
