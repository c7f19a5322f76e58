import Foundation

extension ChangePayload {
    /// This change as `CompactJSONEncoder` writes it, except that its message is `messageJSON`,
    /// that message's JSON written before (chatd writes each message once per change, for its
    /// kept text and for the change), spliced as it is in place of `message`.
    public func json(messageJSON: [UInt8]) throws -> [UInt8] {
        try JSONByteWriter.written(
            { json in
                json.field("{\"seq\":", seq)
                json.field(",\"kind\":", kind.rawValue)
                json.field(",\"conversationId\":", conversationId)
                json.raw(",\"message\":")
                json.bytes.append(contentsOf: messageJSON)
                if let receipt { try json.field(",\"receipt\":", encoded: receipt) }
                if let block { try json.field(",\"block\":", encoded: block) }
                if let reaction { try json.field(",\"reaction\":", encoded: reaction) }
                if let notification { try json.field(",\"notification\":", encoded: notification) }
                if let group { try json.field(",\"group\":", encoded: group) }
                json.field(",\"at\":", at)
                json.raw("}")
            },
            orElse: {
                var whole = self
                whole.message = try JSONDecoder().decode(MessagePayload.self, from: Data(messageJSON))
                return try CompactJSONEncoder().encode(whole)
            })
    }
}
