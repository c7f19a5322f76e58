import Foundation
import OfflineChatProtocol
import Testing

@testable import ChatServer

/// The send's fast body reader may only ever say what `JSONDecoder` says.
@Suite struct PlainSendBodyTests {
    static let plain =
        #"{"muid":"m1","receiver":"bob","receiverType":"user","category":"message","type":"text","text":"hi"}"#

    func same(_ fast: SendMessageRequest, _ body: String) throws -> Bool {
        let reference = try JSONDecoder().decode(SendMessageRequest.self, from: Data(body.utf8))
        return try CompactJSONEncoder().encode(fast) == CompactJSONEncoder().encode(reference)
    }

    @Test func plainBodiesReadAsJSONDecoderReadsThem() throws {
        let bodies = [
            Self.plain,
            #"{"type":"text","category":"message","receiverType":"group","receiver":"g1","muid":"m2"}"#,
            #"{"muid":"m3","receiver":"bob","receiverType":"user","category":"custom","type":"poll","text":null}"#,
            Self.plain.replacingOccurrences(of: ",\"text\":\"hi\"", with: ""),
            " {\n \"muid\" : \"m4\", \"receiver\":\"bob\",\"receiverType\":\"user\",\"category\":\"message\",\"type\":\"text\",\"text\":\"a \\\"quoted\\\" line\\nand é 😀\"} \n"
        ]
        for body in bodies {
            let fast = try #require(PlainSendBody.read(Array(body.utf8)), "\(body)")
            #expect(try same(fast, body), "\(body)")
        }
    }

    @Test func everyOtherShapeIsLeftToJSONDecoder() {
        let others = [
            "", "{}", "[]", "null", Self.plain + " x", String(Self.plain.dropLast()),
            Self.plain.replacingOccurrences(of: "\"hi\"", with: "5"),  // text of another type
            Self.plain.replacingOccurrences(of: "\"user\"", with: "\"robot\""),  // no such receiver type
            Self.plain.replacingOccurrences(of: "\"hi\"", with: "\"\\ud800\""),  // a lone surrogate
            Self.plain.replacingOccurrences(of: "\"hi\"", with: "\"\\u00e9\""),  // any \u escape
            Self.plain.replacingOccurrences(of: "\"muid\":\"m1\",", with: ""),  // muid missing
            Self.plain.replacingOccurrences(of: "}", with: ",\"muid\":\"m9\"}"),  // a repeated key
            Self.plain.replacingOccurrences(of: "}", with: ",\"parentMessageId\":4}"),
            Self.plain.replacingOccurrences(of: "}", with: ",\"metadata\":{\"a\":1}}"),
            Self.plain.replacingOccurrences(of: "}", with: ",\"extra\":true}"),
            Self.plain.replacingOccurrences(of: "\"bob\"", with: "null")
        ]
        for body in others { #expect(PlainSendBody.read(Array(body.utf8)) == nil, "\(body)") }
    }
}
