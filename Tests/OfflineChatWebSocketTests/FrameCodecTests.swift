import Testing

@testable import OfflineChatWebSocket

@Suite struct FrameCodecTests {
    func decodeAll(_ bytes: [UInt8], role: Role = .server, max: Int = 1 << 20) throws -> [Message] {
        var parser = WebSocketParser(role: role, maxMessageSize: max)
        parser.append(bytes)
        var messages: [Message] = []
        while let message = try parser.next() { messages.append(message) }
        return messages
    }

    let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    @Test func theRFCsMaskedHelloExampleDecodes() throws {
        // RFC 6455 §5.7: a single-frame masked text message "Hello".
        let bytes: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
        #expect(try decodeAll(bytes) == [.text("Hello")])
        #expect(Frame(opcode: .text, payload: Array("Hello".utf8)).encoded(mask: mask) == bytes)
    }

    @Test(arguments: [0, 125, 126, 65535, 65536, 200_000])
    func payloadLengthsRoundTripAcrossAllThreeEncodings(length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
        let bytes = Frame(opcode: .binary, payload: payload).encoded(mask: mask)
        #expect(try decodeAll(bytes) == [.binary(payload)])
        let unmasked = Frame(opcode: .binary, payload: payload).encoded()
        #expect(try decodeAll(unmasked, role: .client) == [.binary(payload)])
    }

    @Test func bytesArrivingOneAtATimeDecodeToTheSameMessages() throws {
        let bytes =
            Frame(opcode: .text, payload: Array("héllo wörld".utf8)).encoded(mask: mask)
            + Frame(opcode: .ping, payload: [1, 2]).encoded(mask: mask)
        var parser = WebSocketParser(role: .server)
        var messages: [Message] = []
        for byte in bytes {
            parser.append([byte])
            while let message = try parser.next() { messages.append(message) }
        }
        #expect(messages == [.text("héllo wörld"), .ping([1, 2])])
    }

    @Test func fragmentsReassembleAroundInterleavedControlFrames() throws {
        let bytes =
            Frame(fin: false, opcode: .text, payload: Array("Hel".utf8)).encoded(mask: mask)
            + Frame(opcode: .ping, payload: []).encoded(mask: mask)
            + Frame(fin: false, opcode: .continuation, payload: Array("lo, ".utf8)).encoded(mask: mask)
            + Frame(fin: true, opcode: .continuation, payload: Array("world".utf8)).encoded(mask: mask)
        #expect(try decodeAll(bytes) == [.ping([]), .text("Hello, world")])
    }

    @Test func aMultiByteCharacterSplitAcrossFragmentsIsValid() throws {
        let euro = Array("€".utf8)
        let bytes =
            Frame(fin: false, opcode: .text, payload: [euro[0]]).encoded(mask: mask)
            + Frame(opcode: .continuation, payload: Array(euro[1...])).encoded(mask: mask)
        #expect(try decodeAll(bytes) == [.text("€")])
    }

    @Test func truncatedFramesWaitForMoreBytesInsteadOfFailing() throws {
        let bytes = Frame(opcode: .text, payload: Array(repeating: 65, count: 300)).encoded(mask: mask)
        for cut in [1, 2, 3, 4, 7, 8, 100, bytes.count - 1] {
            #expect(try decodeAll(Array(bytes.prefix(cut))) == [])
        }
    }

    func expectClose(_ bytes: [UInt8], _ code: CloseCode, role: Role = .server, max: Int = 1 << 20) {
        #expect(throws: WebSocketError.self) { try decodeAll(bytes, role: role, max: max) }
        do { _ = try decodeAll(bytes, role: role, max: max) } catch let error as WebSocketError {
            #expect(error.code == code, "\(error.reason)")
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test func malformedFramesAreProtocolErrors() {
        expectClose([0xC1, 0x80] + mask, .protocolError)  // RSV1 set
        expectClose([0x83, 0x80] + mask, .protocolError)  // reserved opcode 3
        expectClose([0x81, 0x05] + Array("Hello".utf8), .protocolError)  // unmasked frame from a client
        expectClose(Frame(opcode: .text, payload: [65]).encoded(mask: mask), .protocolError, role: .client)
        expectClose([0x09, 0x80] + mask, .protocolError)  // fragmented ping
        expectClose(Frame(opcode: .ping, payload: Array(repeating: 0, count: 126)).encoded(mask: mask), .protocolError)
        expectClose(Frame(opcode: .continuation, payload: [65]).encoded(mask: mask), .protocolError)
        expectClose(
            Frame(fin: false, opcode: .text, payload: [65]).encoded(mask: mask)
                + Frame(opcode: .text, payload: [66]).encoded(mask: mask), .protocolError)
        expectClose([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1] + mask, .protocolError)  // 64-bit length, top bit set
    }

    @Test func invalidUTF8InTextIsAnInvalidPayload() {
        expectClose(Frame(opcode: .text, payload: [0xC3, 0x28]).encoded(mask: mask), .invalidPayload)
        // surrogate
        expectClose(Frame(opcode: .text, payload: [0xED, 0xA0, 0x80]).encoded(mask: mask), .invalidPayload)
        expectClose(Frame(opcode: .close, payload: [0x03, 0xE8, 0xFF]).encoded(mask: mask), .invalidPayload)
    }

    @Test func oversizedFramesAndMessagesAreTooBig() {
        expectClose(
            Frame(opcode: .binary, payload: Array(repeating: 0, count: 101)).encoded(mask: mask), .messageTooBig,
            max: 100)
        let fragments = (0..<3).flatMap { index in
            Frame(
                fin: index == 2, opcode: index == 0 ? .binary : .continuation,
                payload: Array(repeating: 0, count: 40)
            ).encoded(mask: mask)
        }
        expectClose(fragments, .messageTooBig, max: 100)
    }

    @Test func closeFramesCarryCodeAndReason() throws {
        #expect(
            try decodeAll(Frame.close(.goingAway, reason: "bye").encoded(mask: mask)) == [.close(.goingAway, "bye")])
        #expect(try decodeAll(Frame(opcode: .close, payload: []).encoded(mask: mask)) == [.close(.noStatus, "")])
        expectClose(Frame(opcode: .close, payload: [0x03]).encoded(mask: mask), .protocolError)
        // 1005 on the wire
        expectClose(Frame(opcode: .close, payload: [0x03, 0xED]).encoded(mask: mask), .protocolError)
        expectClose(Frame(opcode: .close, payload: [0x03, 0xEE]).encoded(mask: mask), .protocolError)  // 1006
        #expect(
            try decodeAll(Frame(opcode: .close, payload: [0x0F, 0xA1]).encoded(mask: mask)) == [
                .close(CloseCode(rawValue: 4001), "")
            ])
    }

    @Test func aLongCloseReasonIsCutToFitAControlFrame() throws {
        let frame = Frame.close(.normal, reason: String(repeating: "x", count: 300))
        #expect(frame.payload.count == 125)
        // Never in the middle of a character: the peer would have to fail with 1007.
        let euros = Frame.close(.normal, reason: String(repeating: "€", count: 60))
        #expect(euros.payload.count == 2 + 41 * 3)
        #expect(try decodeAll(euros.encoded(mask: mask)) == [.close(.normal, String(repeating: "€", count: 41))])
    }

    @Test func theHandshakeAcceptMatchesTheRFCExample() {
        // RFC 6455 §1.3.
        #expect(Handshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(Handshake.isValidKey(Handshake.makeKey()))
        #expect(!Handshake.isValidKey("short"))
    }

    @Test func sha1MatchesKnownVectors() {
        let hex = { (bytes: [UInt8]) in bytes.map { String($0, radix: 16).leftPadded(2) }.joined() }
        #expect(hex(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.hash([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(
            hex(SHA1.hash(Array(repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
