import Foundation
import Testing

@testable import ChatProtocol

/// chatd answers with `CompactJSONEncoder`: whatever it writes must be the JSON `JSONEncoder`
/// writes, up to key order: the same value when decoded, the same JSON object when parsed.
@Suite struct CompactJSONEncoderTests {
    let compact = CompactJSONEncoder()

    /// Both encoders' output parsed with JSONSerialization (key order aside), and the value decoded back.
    func expectSame<T: Codable & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = try compact.encode(value)
        let reference = try JSONEncoder().encode(value)
        let parsed = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as? NSObject
        let expected = try JSONSerialization.jsonObject(with: reference, options: [.fragmentsAllowed]) as? NSObject
        #expect(parsed == expected, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
        #expect(try JSONDecoder().decode(T.self, from: Data(bytes)) == value, sourceLocation: sourceLocation)
    }

    @Test func everyKindOfChangeEncodesAsJSONEncoderDoes() throws {
        for change in JSONReaderTests.everyKind { try expectSame(change) }
        try expectSame(JSONReaderTests.everyKind)
    }

    @Test func conversationsWithEitherPeerAndPagesToo() throws {
        let message = try #require(JSONReaderTests.everyKind.first?.message)
        let user = ConversationPayload(
            conversationId: "a~b", conversationType: .user,
            conversationWith: .user(UserPayload(uid: "b", name: "Bee", metadata: ["x": .null])),
            lastMessage: message, unreadMessageCount: 2, lastDeliveredMessageId: 3, lastReadMessageId: nil,
            peerDeliveredMessageId: nil, peerReadMessageId: 1, updatedAt: 9)
        let groupPeer = try #require(JSONReaderTests.everyKind.compactMap(\.group).first)
        let group = ConversationPayload(
            conversationId: "group_g", conversationType: .group, conversationWith: .group(groupPeer),
            lastMessage: nil, unreadMessageCount: 0, lastDeliveredMessageId: nil, lastReadMessageId: nil,
            peerDeliveredMessageId: nil, peerReadMessageId: nil, updatedAt: 10)
        try expectSame(user)
        try expectSame(group)
        let page = Page(items: [user, group], next: "cursor/with\"quotes\"")
        let bytes = try compact.encode(page)
        #expect(try JSONDecoder().decode(Page<ConversationPayload>.self, from: Data(bytes)).items == [user, group])
        #expect(try compact.encode(Page<ConversationPayload>(items: [], next: nil)) == Array(#"{"items":[]}"#.utf8))
    }

    /// Messages have a writer of their own (`MessagePayload.writeJSON`): byte for byte what
    /// their `Encodable` conformance writes through the same encoder, with every field set and
    /// with each optional one left out; and no field of the type is missing from it.
    @Test func theHandWrittenMessageWriterWritesWhatEncodableWrites() throws {
        let codable = CompactJSONEncoder(handWritten: false)
        var full = try #require(JSONReaderTests.everyKind.first?.message)
        full.text = "every \"field\" \u{01} set"
        full.deletedAt = 5
        full.reactions = [ReactionCount(reaction: "👍", count: 2), ReactionCount(reaction: "❤️", count: 1)]
        full.callStatus = .ended
        full.action = MemberActionPayload(
            guid: "g", action: .kicked, actor: "a", target: "b", oldScope: nil, newScope: nil)
        var bare = full
        bare.muid = nil
        bare.text = nil
        bare.attachment = nil
        bare.customData = nil
        bare.metadata = nil
        bare.editedAt = nil
        bare.deletedAt = nil
        bare.reactions = nil
        bare.parentMessageId = nil
        bare.replyCount = nil
        bare.callStatus = nil
        bare.action = nil
        bare.id = -1
        var empty = full
        empty.reactions = []
        empty.metadata = [:]
        let messages = [full, bare, empty] + JSONReaderTests.everyKind.compactMap(\.message)
        for message in messages {
            let written = try compact.encode(message)
            #expect(written == (try codable.encode(message)), "\(String(decoding: written, as: UTF8.self))")
            try expectSame(message)
        }
        #expect(try compact.encode(messages) == (try codable.encode(messages)))
        let keys = try JSONSerialization.jsonObject(with: Data(try compact.encode(full))) as? [String: Any]
        #expect(keys?.count == Mirror(reflecting: full).children.count, "a field the writer leaves out")
    }

    @Test func stringsAreEscapedAsJSONNeedsAndSlashesAreNot() throws {
        let text = "quote \" backslash \\ slash / newline \n tab \t return \r bell \u{07} nul \u{00} é 😀 \u{2028}"
        try expectSame(text)
        #expect(String(decoding: try compact.encode("a/b\u{01}"), as: UTF8.self) == #""a/b\u0001""#)
    }

    @Test func numbersAndLiterals() throws {
        for number in [0, 1.5, -3e-2, 2, 1e300, -0.0, 123_456_789.125] { try expectSame(JSONValue.number(number)) }
        try expectSame([Int64.max, Int64.min, 0])
        try expectSame(JSONValue.array([.bool(true), .bool(false), .null, .object([:]), .array([])]))
        try expectSame(["optional": String?.none, "some": "x"])
    }

    /// Shapes the writer leaves to JSONEncoder: its output then.
    @Test func datesNestedContainersAndNonFiniteNumbersFallBackToJSONEncoder() throws {
        struct Dated: Codable, Equatable {
            var at = Date(timeIntervalSince1970: 5)
            var blob = Data([1, 2])
        }
        struct Nested: Codable, Equatable {
            var inner = 7
            enum Keys: CodingKey { case outer, inner }
            init() {}
            init(from decoder: any Decoder) throws {
                inner = try decoder.container(keyedBy: Keys.self).nestedContainer(keyedBy: Keys.self, forKey: .outer)
                    .decode(Int.self, forKey: .inner)
            }
            func encode(to encoder: any Encoder) throws {
                var outer = encoder.container(keyedBy: Keys.self)
                var nested = outer.nestedContainer(keyedBy: Keys.self, forKey: .outer)
                try nested.encode(inner, forKey: .inner)
            }
        }
        // JSONEncoder's own key order differs from one call to the next: compare the JSON.
        try expectSame(Dated())
        try expectSame(Nested())
        #expect(throws: EncodingError.self) { try compact.encode(JSONValue.number(.nan)) }
    }
}
