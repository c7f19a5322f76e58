import OfflineChatProtocol

/// The body nearly every send has, read without `JSONDecoder` (which was 7% of a send's CPU):
/// `muid`, `receiver`, `receiverType`, `category` and `type`, each once, and optionally `text`,
/// all strings without `\u` escapes. Anything else (an attachment, custom data, metadata, a
/// thread or call field, an unknown or repeated key, an escape, a value of another type) reads
/// as nil, and `RouteContext.decode` decides as before, with its errors. So this reader only
/// ever says what `JSONDecoder` would say, and only for bodies where the two cannot differ.
enum PlainSendBody {
    private struct Unusual: Error {}

    static func read(_ body: [UInt8]) -> SendMessageRequest? {
        // `\u` escapes (a lone surrogate: JSONDecoder refuses it, JSONReader repairs it) go the long way.
        guard !containsUnicodeEscape(body) else { return nil }
        var reader = JSONReader(body, maxDepth: 1)
        var fields: [String: String?] = [:]
        do {
            try reader.object { key, reader in
                guard ["muid", "receiver", "receiverType", "category", "type", "text"].contains(key),
                    fields[key] == nil
                else { throw Unusual() }
                fields[key] = try key == "text" ? reader.optional { try $0.string() } : reader.string()
            }
            try reader.end()
        } catch {
            return nil
        }
        guard let muid = fields["muid"] ?? nil, let receiver = fields["receiver"] ?? nil,
            let receiverType = (fields["receiverType"] ?? nil).flatMap(ReceiverType.init(rawValue:)),
            let category = (fields["category"] ?? nil).flatMap(MessageCategory.init(rawValue:)),
            let type = fields["type"] ?? nil
        else { return nil }
        return SendMessageRequest(
            muid: muid, receiver: receiver, receiverType: receiverType, category: category, type: type,
            text: fields["text"] ?? nil)
    }

    /// A backslash followed by `u` anywhere (an escaped backslash before a `u` counts too: rare, and
    /// only costs the long way).
    static func containsUnicodeEscape(_ body: [UInt8]) -> Bool {
        guard body.count > 1 else { return false }
        for index in 0..<(body.count - 1)
        where body[index] == UInt8(ascii: "\\") && body[index + 1] == UInt8(ascii: "u") {
            return true
        }
        return false
    }
}
