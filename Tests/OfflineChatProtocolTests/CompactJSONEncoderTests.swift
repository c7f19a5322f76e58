import Foundation
import Testing

@testable import OfflineChatProtocol

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

    /// Each of `values`, all of them as one array and an empty array: byte for byte what the
    /// `Encodable` conformance writes through the same encoder (`handWritten` off), and the same
    /// value decoded back.
    func expectHandWrittenAsEncodable<T: Codable & Equatable>(
        _ values: [T], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let codable = CompactJSONEncoder(handWritten: false)
        for value in values {
            let written = try compact.encode(value)
            #expect(
                written == (try codable.encode(value)), "\(String(decoding: written, as: UTF8.self))",
                sourceLocation: sourceLocation)
            try expectSame(value, sourceLocation: sourceLocation)
        }
        #expect(try compact.encode(values) == (try codable.encode(values)), sourceLocation: sourceLocation)
        #expect(try compact.encode([T]()) == (try codable.encode([T]())), sourceLocation: sourceLocation)
    }

    /// How many keys `value` is written with: as many as the type's stored properties when
    /// every optional is set (a writer that leaves a field out fails it).
    func keyCount(_ value: some Encodable) throws -> Int? {
        (try JSONSerialization.jsonObject(with: Data(try compact.encode(value))) as? [String: Any])?.count
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
        try expectHandWrittenAsEncodable(messages)
        #expect(try compact.encode(["page": messages]) == (try codable.encode(["page": messages])))
        #expect(try keyCount(full) == Mirror(reflecting: full).children.count, "a field the writer leaves out")
    }

    @Test func theHandWrittenConversationUserAndGroupWritersWriteWhatEncodableWrites() throws {
        let codable = CompactJSONEncoder(handWritten: false)
        var user = UserPayload(
            uid: "bob", name: "Bob \"B\" \u{02}", avatar: "https://a/b.png",
            metadata: ["k": .array([.number(1), .null])],
            tags: ["x", "y\n"], role: "admin", lastActiveAt: 9)
        user.status = "online"
        user.blockedByMe = true
        user.hasBlockedMe = false
        let bareUser = UserPayload(uid: "carol", name: "")
        let group = GroupPayload(
            guid: "g", name: "Team", type: .password, icon: "i", description: "d", metadata: [:], tags: ["t"],
            owner: "bob", membersCount: 3, createdAt: 1, updatedAt: 2, hasJoined: true, scope: .moderator, joinedAt: 4)
        let bareGroup = GroupPayload(
            guid: "h", name: "Open", type: .public, owner: "bob", membersCount: 0, createdAt: 0, updatedAt: -1)
        let message = try #require(JSONReaderTests.everyKind.first?.message)
        let full = ConversationPayload(
            conversationId: "alice~bob", conversationType: .user, conversationWith: .user(user), lastMessage: message,
            unreadMessageCount: 7, lastDeliveredMessageId: 1, lastReadMessageId: 2, peerDeliveredMessageId: 3,
            peerReadMessageId: 4, updatedAt: 5)
        var bare = full
        bare.conversationWith = .group(bareGroup)
        bare.conversationType = .group
        bare.lastMessage = nil
        bare.lastDeliveredMessageId = nil
        bare.lastReadMessageId = nil
        bare.peerDeliveredMessageId = nil
        bare.peerReadMessageId = nil
        var withGroup = full
        withGroup.conversationWith = .group(group)
        var withBareUser = bare
        withBareUser.conversationWith = .user(bareUser)
        let conversations = [full, bare, withGroup, withBareUser]
        try expectHandWrittenAsEncodable(conversations)
        let page = Page(items: conversations, next: "c")
        #expect(try compact.encode(page) == (try codable.encode(page)))
        try expectHandWrittenAsEncodable([user, bareUser])
        try expectHandWrittenAsEncodable([group, bareGroup])
        #expect(try keyCount(full) == Mirror(reflecting: full).children.count, "a conversation field left out")
        #expect(try keyCount(user) == Mirror(reflecting: user).children.count, "a user field left out")
        #expect(try keyCount(group) == Mirror(reflecting: group).children.count, "a group field left out")
    }

    /// chatd writes a message once per change, for its kept text and inside the change: a change
    /// with its message written before is the same bytes, for every kind that carries one.
    @Test func aChangeWithItsMessageWrittenBeforeIsTheSameBytes() throws {
        let withMessages = JSONReaderTests.everyKind.filter { $0.message != nil }
        #expect(!withMessages.isEmpty)
        for change in withMessages {
            let kept = try compact.encode(try #require(change.message))
            #expect(try change.json(messageJSON: kept) == (try compact.encode(change)), "\(change.kind)")
        }
    }

    /// chatd splices a message's kept JSON as a conversation's last message: the bytes are the
    /// conversation's with that message, and nil writes the conversation as it is.
    @Test func aConversationWithItsLastMessageWrittenBeforeIsTheSameBytes() throws {
        let message = try #require(JSONReaderTests.everyKind.first?.message)
        let user = UserPayload(uid: "bob", name: "Bob")
        let conversation = ConversationPayload(
            conversationId: "alice~bob", conversationType: .user, conversationWith: .user(user), lastMessage: message,
            unreadMessageCount: 1, lastDeliveredMessageId: nil, lastReadMessageId: 2, peerDeliveredMessageId: nil,
            peerReadMessageId: nil, updatedAt: 5)
        var withoutMessage = conversation
        withoutMessage.lastMessage = nil
        let kept = String(decoding: try compact.encode(message), as: UTF8.self)
        #expect(try withoutMessage.json(lastMessageJSON: kept) == (try compact.encode(conversation)))
        let none: String? = nil
        #expect(try conversation.json(lastMessageJSON: none) == (try compact.encode(conversation)))
        #expect(try withoutMessage.json(lastMessageJSON: none) == (try compact.encode(withoutMessage)))
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
