/// A whole message or a control event, after reassembly and validation.
public enum Message: Equatable, Sendable {
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// The peer's close frame: its code (`.noStatus` when it had none) and reason.
    case close(CloseCode, String)
}

/// Joins fragments into messages, enforces `maxMessageSize`, validates UTF-8 in text
/// messages and close reasons, and checks close codes.
public struct MessageAssembler: Sendable {
    public let maxMessageSize: Int
    private var fragmentOpcode: Opcode?
    private var fragments: [UInt8] = []

    public init(maxMessageSize: Int = 16 << 20) {
        self.maxMessageSize = maxMessageSize
    }

    /// Takes one frame; returns a message when one is complete.
    public mutating func push(_ frame: Frame) throws(WebSocketError) -> Message? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return try Self.decodeClose(frame.payload)
        case .text, .binary:
            guard fragmentOpcode == nil else {
                throw WebSocketError(.protocolError, "a new message began before the fragmented one ended")
            }
            guard !frame.fin else { return try Self.complete(frame.opcode, frame.payload) }
            fragmentOpcode = frame.opcode
            fragments = []
            try appendFragment(frame.payload)
            return nil
        case .continuation:
            guard let opcode = fragmentOpcode else {
                throw WebSocketError(.protocolError, "continuation frame without a message to continue")
            }
            try appendFragment(frame.payload)
            guard frame.fin else { return nil }
            fragmentOpcode = nil
            defer { fragments = [] }
            return try Self.complete(opcode, fragments)
        }
    }

    private mutating func appendFragment(_ payload: [UInt8]) throws(WebSocketError) {
        guard fragments.count + payload.count <= maxMessageSize else {
            throw WebSocketError(.messageTooBig, "message exceeds \(maxMessageSize) bytes")
        }
        fragments += payload
    }

    private static func complete(_ opcode: Opcode, _ payload: [UInt8]) throws(WebSocketError) -> Message {
        guard opcode == .text else { return .binary(payload) }
        guard let text = String(validating: payload, as: UTF8.self) else {
            throw WebSocketError(.invalidPayload, "text message is not valid UTF-8")
        }
        return .text(text)
    }

    static func decodeClose(_ payload: [UInt8]) throws(WebSocketError) -> Message {
        guard !payload.isEmpty else { return .close(.noStatus, "") }
        guard payload.count >= 2 else { throw WebSocketError(.protocolError, "close payload of one byte") }
        let code = CloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isSendable else {
            throw WebSocketError(.protocolError, "close code \(code.rawValue) is not allowed on the wire")
        }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            throw WebSocketError(.invalidPayload, "close reason is not valid UTF-8")
        }
        return .close(code, reason)
    }
}

/// Frame decoding and message assembly in one: bytes in, messages out.
public struct WebSocketParser: Sendable {
    private var decoder: FrameDecoder
    private var assembler: MessageAssembler

    public init(role: Role, maxMessageSize: Int = 16 << 20) {
        decoder = FrameDecoder(role: role, maxFrameSize: maxMessageSize)
        assembler = MessageAssembler(maxMessageSize: maxMessageSize)
    }

    public mutating func append(_ bytes: some Sequence<UInt8>) { decoder.append(bytes) }

    /// The next complete message, or nil when more bytes are needed.
    public mutating func next() throws(WebSocketError) -> Message? {
        while let frame = try decoder.nextFrame() {
            if let message = try assembler.push(frame) { return message }
        }
        return nil
    }
}
