/// A message written by hand (and, below, the helpers every hand-written payload uses): the
/// payload chatd writes most (30 to a history page, one in every change and realtime frame).
/// Through `Encodable` each field went through the generic keyed container and its metadata
/// look-ups: 2 µs a message, a quarter of chatd's CPU on a history read under load. The bytes
/// are exactly those of the synthesized conformance (declaration order, `nil` left out), which
/// `CompactJSONEncoderTests` checks field by field.
extension MessagePayload {
    func writeJSON(to json: JSONByteWriter) throws {
        json.raw("{\"id\":")
        json.writeInteger(id)
        if let muid { json.field(",\"muid\":", muid) }
        json.field(",\"conversationId\":", conversationId)
        json.field(",\"sender\":", sender)
        json.field(",\"receiver\":", receiver)
        json.field(",\"receiverType\":", receiverType.rawValue)
        json.field(",\"category\":", category.rawValue)
        json.field(",\"type\":", type)
        if let text { json.field(",\"text\":", text) }
        if let attachment { try json.field(",\"attachment\":", encoded: attachment) }
        if let customData { try json.field(",\"customData\":", encoded: customData) }
        if let metadata { try json.field(",\"metadata\":", encoded: metadata) }
        json.field(",\"sentAt\":", sentAt)
        json.field(",\"updatedAt\":", updatedAt)
        if let editedAt { json.field(",\"editedAt\":", editedAt) }
        if let deletedAt { json.field(",\"deletedAt\":", deletedAt) }
        if let reactions {
            json.raw(",\"reactions\":")
            json.writeArray(reactions) { reaction in
                json.field("{\"reaction\":", reaction.reaction)
                json.field(",\"count\":", reaction.count)
                json.raw("}")
            }
        }
        if let parentMessageId { json.field(",\"parentMessageId\":", parentMessageId) }
        if let replyCount { json.field(",\"replyCount\":", replyCount) }
        if let callStatus { json.field(",\"callStatus\":", callStatus.rawValue) }
        if let action { try json.field(",\"action\":", encoded: action) }
        json.raw("}")
    }
}

extension JSONByteWriter {
    /// Bytes written as they are (a key with its punctuation).
    func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    func field(_ key: StaticString, _ value: String) {
        raw(key)
        writeString(value)
    }

    func field(_ key: StaticString, _ value: Bool) {
        raw(key)
        writeBool(value)
    }

    func field(_ key: StaticString, strings: [String]) {
        raw(key)
        writeArray(strings, writeString)
    }

    /// `elements` as a JSON array, each written by `write`.
    func writeArray<Element>(_ elements: [Element], _ write: (Element) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try write(element)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    func field(_ key: StaticString, _ value: some BinaryInteger) {
        raw(key)
        writeInteger(value)
    }

    /// A value of a rarer shape, through its `Encodable` conformance.
    func field(_ key: StaticString, encoded value: some Encodable) throws {
        raw(key)
        try encodeValue(value)
    }
}
