import Foundation

/// The conversation list's entries written by hand, with the user or group each is with: after
/// the messages (`MessagePayload.writeJSON`), the list's `Encodable` path was the largest
/// share of its encoding. The bytes are exactly those of the synthesized conformances
/// (declaration order, `nil` left out), which `CompactJSONEncoderTests` checks field by field.
extension ConversationPayload {
    /// This conversation as `CompactJSONEncoder` writes it, except that its last message is
    /// `lastMessageJSON`, a message's JSON written before (chatd keeps each message's), spliced
    /// as it is in place of `lastMessage`; nil writes `lastMessage` as usual.
    public func json(lastMessageJSON: String?) throws -> [UInt8] {
        try JSONByteWriter.written(
            { try writeJSON(to: $0, lastMessageJSON: lastMessageJSON) },
            orElse: {
                var whole = self
                if let lastMessageJSON {
                    whole.lastMessage = try JSONDecoder().decode(MessagePayload.self, from: Data(lastMessageJSON.utf8))
                }
                return try CompactJSONEncoder().encode(whole)
            })
    }

    func writeJSON(to json: JSONByteWriter, lastMessageJSON: String? = nil) throws {
        json.field("{\"conversationId\":", conversationId)
        json.field(",\"conversationType\":", conversationType.rawValue)
        json.raw(",\"conversationWith\":")
        switch conversationWith {
        case .user(let user): try user.writeJSON(to: json)
        case .group(let group): try group.writeJSON(to: json)
        }
        if let lastMessageJSON {
            json.raw(",\"lastMessage\":")
            json.bytes.append(contentsOf: lastMessageJSON.utf8)
        } else if let lastMessage {
            json.raw(",\"lastMessage\":")
            try lastMessage.writeJSON(to: json)
        }
        json.field(",\"unreadMessageCount\":", unreadMessageCount)
        if let lastDeliveredMessageId { json.field(",\"lastDeliveredMessageId\":", lastDeliveredMessageId) }
        if let lastReadMessageId { json.field(",\"lastReadMessageId\":", lastReadMessageId) }
        if let peerDeliveredMessageId { json.field(",\"peerDeliveredMessageId\":", peerDeliveredMessageId) }
        if let peerReadMessageId { json.field(",\"peerReadMessageId\":", peerReadMessageId) }
        json.field(",\"updatedAt\":", updatedAt)
        json.raw("}")
    }
}

extension UserPayload {
    func writeJSON(to json: JSONByteWriter) throws {
        json.field("{\"uid\":", uid)
        json.field(",\"name\":", name)
        if let avatar { json.field(",\"avatar\":", avatar) }
        if let metadata { try json.field(",\"metadata\":", encoded: metadata) }
        json.field(",\"tags\":", strings: tags)
        if let role { json.field(",\"role\":", role) }
        if let lastActiveAt { json.field(",\"lastActiveAt\":", lastActiveAt) }
        if let status { json.field(",\"status\":", status) }
        if let blockedByMe { json.field(",\"blockedByMe\":", blockedByMe) }
        if let hasBlockedMe { json.field(",\"hasBlockedMe\":", hasBlockedMe) }
        json.raw("}")
    }
}

extension GroupPayload {
    func writeJSON(to json: JSONByteWriter) throws {
        json.field("{\"guid\":", guid)
        json.field(",\"name\":", name)
        json.field(",\"type\":", type.rawValue)
        if let icon { json.field(",\"icon\":", icon) }
        if let description { json.field(",\"description\":", description) }
        if let metadata { try json.field(",\"metadata\":", encoded: metadata) }
        json.field(",\"tags\":", strings: tags)
        json.field(",\"owner\":", owner)
        json.field(",\"membersCount\":", membersCount)
        json.field(",\"createdAt\":", createdAt)
        json.field(",\"updatedAt\":", updatedAt)
        json.field(",\"hasJoined\":", hasJoined)
        if let scope { json.field(",\"scope\":", scope.rawValue) }
        if let joinedAt { json.field(",\"joinedAt\":", joinedAt) }
        json.raw("}")
    }
}
