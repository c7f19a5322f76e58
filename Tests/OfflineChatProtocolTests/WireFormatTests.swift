import Foundation
import OfflineChatProtocol
import Testing

@Suite struct WireFormatTests {
    @Test func directConversationIDsAreTheSameFromEitherSide() {
        #expect(ConversationPayload.directID("bob", "alice") == "alice~bob")
        #expect(ConversationPayload.directID("alice", "bob") == "alice~bob")
    }

    @Test func freeFormJSONRoundTripsEveryShape() throws {
        let value: JSONValue = .object([
            "a": .array([.null, .bool(true), .number(1.5), .string("x")]),
            "b": .object(["c": .number(-2)])
        ])
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }

    @Test func errorCodesEncodeAsPlainStrings() throws {
        let data = try JSONEncoder().encode(APIError(code: .cursorExpired, message: "reset"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        #expect(object == ["code": "cursor_expired", "message": "reset"])
        #expect(try JSONDecoder().decode(APIError.self, from: data).code == .cursorExpired)
    }

    @Test func changeKindsUseDottedNamesOnTheWire() throws {
        let change = ChangePayload(
            seq: 7, kind: .receiptRead, conversationId: "a~b",
            receipt: ReceiptPayload(kind: .read, conversationId: "a~b", uid: "b", messageId: 3, at: 9),
            at: 9)
        let json = String(decoding: try JSONEncoder().encode(change), as: UTF8.self)
        #expect(json.contains("\"receipt.read\""))
        #expect(try JSONDecoder().decode(ChangePayload.self, from: Data(json.utf8)) == change)
    }
}

@Suite struct ConversationIDTests {
    @Test func differentPairsNeverShareADirectID() {
        // With a separator that uids may contain, ("a", "b_user_c") and ("a_user_b", "c") collided.
        let uids = ["a", "b", "a_b", "b_a", "a_user_b", "b_user_c", "c", "user", "x_user", "b_user"]
        var seen: [String: Set<String>] = [:]
        for x in uids {
            for y in uids where x != y {
                let id = ConversationPayload.directID(x, y)
                if let pair = seen[id] { #expect(pair == [x, y], "\(id) names both \(pair) and \([x, y])") }
                seen[id] = [x, y]
            }
        }
    }
}

@Suite struct MentionTests {
    @Test func mentionsAreParsedInOrderWithoutRepeats() {
        #expect(FeedItemPayload.mentions(in: "hi <@uid:bob> and <@uid:carol>, <@uid:bob>!") == ["bob", "carol"])
        #expect(FeedItemPayload.mentions(in: "no mentions, <@uid:> nor <@uid:open") == [])
        #expect(FeedItemPayload.mentions(in: "é <b> <<@uid:zoë> 1 < 2 <@uid:日本>") == ["zoë", "日本"])
        #expect(FeedItemPayload.mentions(in: "<@uid:a><@uid:b>") == ["a", "b"])
    }
}
