import Foundation
import OfflineChatProtocol
import Testing

/// The SDK reads changelog pages with `JSONReader`: it must make exactly what `JSONDecoder`
/// makes of every kind of change, and refuse what `JSONDecoder` refuses.
@Suite struct JSONReaderTests {
    static let decoder = JSONDecoder()

    /// One change of every kind, with every optional field of a message set somewhere.
    static let everyKind: [ChangePayload] = {
        var media = MessagePayload(
            id: 11, muid: "m11", conversationId: "group_g", sender: "a", receiver: "g", receiverType: .group,
            category: .message, type: "image", text: nil,
            attachment: Attachment(
                url: "/v1/media/ab", name: "p.png", size: 42, mimeType: "image/png", extension: "png"),
            customData: .object(["deep": .array([.number(1.5), .bool(false), .null, .string("é\n\"x\"")])]),
            metadata: ["tags": .array([.string("a")]), "n": .number(-3e-2)],
            sentAt: 1_796_285_970_890, updatedAt: 1_796_285_970_999, editedAt: 1_796_285_970_950,
            deletedAt: nil, reactions: [ReactionCount(reaction: "👍", count: 2)], parentMessageId: 7, replyCount: 3,
            callStatus: nil, action: nil)
        var call = media
        call.id = 12
        call.category = .call
        call.type = "audio"
        call.attachment = nil
        call.callStatus = .ongoing
        var action = media
        action.id = 13
        action.category = .action
        action.type = "groupMember"
        action.action = MemberActionPayload(
            guid: "g", action: .scopeChanged, actor: "a", target: "b", oldScope: .participant, newScope: .admin)
        var deleted = media
        deleted.id = 14
        deleted.deletedAt = 1_796_285_971_000
        deleted.text = nil
        media.text = "caption with \u{1F600} and \\ and / and \t"
        let group = GroupPayload(
            guid: "g", name: "G", type: .password, icon: "i", description: "d", metadata: ["k": .bool(true)],
            tags: ["t"], owner: "a", membersCount: 3, createdAt: 1, updatedAt: 2)
        return [
            ChangePayload(seq: 1, kind: .messageCreated, conversationId: "group_g", message: media, at: 1),
            ChangePayload(seq: 2, kind: .messageUpdated, conversationId: "group_g", message: deleted, at: 2),
            ChangePayload(
                seq: 3, kind: .receiptDelivered, conversationId: "a~b",
                receipt: ReceiptPayload(kind: .delivered, conversationId: "a~b", uid: "b", messageId: 3, at: 3), at: 3),
            ChangePayload(
                seq: 4, kind: .receiptRead, conversationId: "a~b",
                receipt: ReceiptPayload(kind: .read, conversationId: "a~b", uid: "b", messageId: 3, at: 4), at: 4),
            ChangePayload(
                seq: 5, kind: .reactionAdded, conversationId: "group_g", message: media,
                reaction: ReactionPayload(id: 9, messageId: 11, uid: "b", reaction: "👍", reactedAt: 5), at: 5),
            ChangePayload(
                seq: 6, kind: .reactionRemoved, conversationId: "group_g", message: call,
                reaction: ReactionPayload(id: 9, messageId: 12, uid: "b", reaction: "👍", reactedAt: 6), at: 6),
            ChangePayload(
                seq: 7, kind: .userBlocked, conversationId: "a~b", block: BlockPayload(blocker: "a", blocked: "b"),
                at: 7),
            ChangePayload(
                seq: 8, kind: .userUnblocked, conversationId: "a~b", block: BlockPayload(blocker: "a", blocked: "b"),
                at: 8),
            ChangePayload(
                seq: 9, kind: .notificationCreated, conversationId: "group_g",
                notification: FeedItemPayload(
                    id: 1, kind: .reaction, actor: "b", messageId: 11, conversationId: "group_g",
                    reaction: "👍", at: 9), at: 9),
            ChangePayload(seq: 10, kind: .groupCreated, conversationId: "group_g", group: group, at: 10),
            ChangePayload(seq: 11, kind: .groupUpdated, conversationId: "group_g", group: group, at: 11),
            ChangePayload(seq: 12, kind: .groupDeleted, conversationId: "group_g", group: group, at: 12),
            ChangePayload(seq: 13, kind: .groupMember, conversationId: "group_g", message: action, at: 13)
        ]
    }()

    @Test func everyKindOfChangeReadsAsJSONDecoderReadsIt() throws {
        let page = ChangelogPage(changes: Self.everyKind, hasMore: true, cursor: "c1.13", serverTime: 99)
        for formatting in [JSONEncoder.OutputFormatting(), .sortedKeys, .prettyPrinted, .withoutEscapingSlashes] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = formatting
            let data = try encoder.encode(page)
            let read = try ChangelogPage(json: data)
            let decoded = try Self.decoder.decode(ChangelogPage.self, from: data)
            #expect(read.changes == decoded.changes && decoded.changes == Self.everyKind)
            #expect(read.hasMore && read.cursor == "c1.13" && read.serverTime == 99)
        }
    }

    @Test func escapesUnknownKeysAndExplicitNullsReadLikeJSONDecoder() throws {
        let text = #"""
            {"serverTime":1,"extra":{"nested":[1,{"x":null}]},"changes":[{"seq":1,"kind":"message.created","conversationId":"a~b","at":2,
             "future":"ignored","message":{"id":5,"muid":null,"conversationId":"a~b","sender":"a","receiver":"b","receiverType":"user",
             "category":"message","type":"text","text":"\u00e9\ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t","sentAt":1,"updatedAt":1.0e0,
             "editedAt":null,"customData":null,"metadata":null,"attachment":null}}],"cursor":"c1.1","hasMore":false}
            """#
        let read = try ChangelogPage(json: Data(text.utf8))
        let decoded = try Self.decoder.decode(ChangelogPage.self, from: Data(text.utf8))
        #expect(read.changes == decoded.changes)
        #expect(read.changes.first?.message?.text == "é😀 \"q\" \\ / \u{8}\u{C}\n\r\t")
    }

    /// Where the two differ, the reader is the stricter or the more forgiving on purpose: it
    /// refuses a trailing comma (RFC 8259; `JSONDecoder` accepts one) and repairs a lone
    /// surrogate escape with U+FFFD, as it repairs invalid UTF-8 (`JSONDecoder` refuses both).
    @Test func trailingCommasAreRefusedAndLoneSurrogatesRepaired() throws {
        var comma = JSONReader(Data(#"{"a":1,}"#.utf8))
        #expect(throws: JSONReader.Failure.self) { try comma.value() }
        var lone = JSONReader(Data(#""\ud800x""#.utf8))
        #expect(try lone.string() == "\u{FFFD}x")
    }

    @Test func freeFormValuesReadAsJSONDecoderReadsThem() throws {
        var generator = SystemRandomNumberGenerator()
        func random(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 4 ? 4 : 6), using: &generator) {
            case 0: return .null
            case 1: return .bool(Bool.random())
            case 2: return .number([0, -1, 1e300, 0.1, -2.5e-8, 123_456_789][Int.random(in: 0..<6)])
            case 3: return .string(["", "a", "\u{0}\u{1F}", "\"\\/", "日本", "\u{1F600}"][Int.random(in: 0..<6)])
            case 4: return .array((0..<Int.random(in: 0..<4)).map { _ in random(depth + 1) })
            default:
                return .object(
                    Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0..<4)).map { ("k\($0)", random(depth + 1)) }))
            }
        }
        for _ in 0..<500 {
            let value = random(0)
            let data = try JSONEncoder().encode(value)
            var reader = JSONReader(data)
            #expect(try reader.value() == Self.decoder.decode(JSONValue.self, from: data))
            try reader.end()
        }
    }

    @Test func malformedTextIsRefusedWhereJSONDecoderRefusesIt() throws {
        let bad = [
            #"{"changes":[],"cursor":"c","hasMore":true,"serverTime":1"#,
            #"{"changes":[],"cursor":"c","hasMore":true,"serverTime":1} x"#,
            #"{"changes":[],"cursor":"c","hasMore":true,"serverTime":01}"#,
            #"{"changes":[],"cursor":"c","hasMore":true,"serverTime":1.}"#,
            #"{"changes":[],"cursor":"c","hasMore":tru,"serverTime":1}"#,
            "{\"changes\":[],\"cursor\":\"c\u{1}\",\"hasMore\":true,\"serverTime\":1}",
            #"{"changes":[,],"cursor":"c","hasMore":true,"serverTime":1}"#,
            #"{"changes":[],"cursor":"c","hasMore":true}"#,
            #"{"changes":[],"cursor":"c","hasMore":true,"serverTime":1e999}"#,
            #"{"changes":[{"seq":1,"kind":"message.exploded","conversationId":"a","at":1}],"cursor":"c","hasMore":true,"serverTime":1}"#,
            #"{"changes":[],"cursor":"\x","hasMore":true,"serverTime":1}"#,
            #"{"changes":[],"cursor":"c","hasMore":true,"serverTime":99999999999999999999}"#
        ]
        for text in bad {
            #expect(throws: (any Error).self, "\(text)") { try ChangelogPage(json: Data(text.utf8)) }
            #expect(throws: (any Error).self, "\(text)") {
                try Self.decoder.decode(ChangelogPage.self, from: Data(text.utf8))
            }
        }
    }

    /// Nesting beyond the limit is refused as soon as it is reached, in time linear in the input.
    @Test func deepNestingIsRefusedQuickly() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        var reader = JSONReader(Data(deep.utf8), maxDepth: 32)
        #expect(throws: JSONReader.Failure.self) { try reader.value() }
        var shallow = JSONReader(
            Data((String(repeating: "[", count: 32) + String(repeating: "]", count: 32)).utf8), maxDepth: 32)
        _ = try shallow.value()
        try shallow.end()
    }
}
