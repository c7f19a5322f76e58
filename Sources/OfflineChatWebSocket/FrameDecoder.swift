/// Incremental frame decoder: feed bytes as they arrive, take whole frames out.
///
/// Rejects what RFC 6455 forbids: reserved bits, unknown opcodes, fragmented or oversized
/// control frames, the wrong masking for the role, and frames larger than `maxFrameSize`.
public struct FrameDecoder: Sendable {
    public let role: Role
    public let maxFrameSize: Int
    private var buffer: [UInt8] = []
    private var start = 0

    public init(role: Role, maxFrameSize: Int = 16 << 20) {
        self.role = role
        self.maxFrameSize = maxFrameSize
    }

    /// Bytes received but not yet decoded into a frame.
    public var bufferedByteCount: Int { buffer.count - start }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole frame, or nil when more bytes are needed.
    public mutating func nextFrame() throws(WebSocketError) -> Frame? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        guard first & 0x70 == 0 else { throw WebSocketError(.protocolError, "reserved bits set without an extension") }
        guard let opcode = Opcode(rawValue: first & 0x0F) else {
            throw WebSocketError(.protocolError, "unknown opcode \(first & 0x0F)")
        }
        let fin = first & 0x80 != 0
        let masked = second & 0x80 != 0
        if masked != (role == .server) {
            throw WebSocketError(
                .protocolError, role == .server ? "client frames must be masked" : "server frames must not be masked")
        }
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = (0..<8).reduce(0) { $0 << 8 | UInt64(buffer[start + 2 + $1]) }
            guard length >> 63 == 0 else { throw WebSocketError(.protocolError, "payload length has its top bit set") }
            headerLength = 10
        }
        if opcode.isControl {
            guard fin else { throw WebSocketError(.protocolError, "control frames cannot be fragmented") }
            guard length <= 125 else { throw WebSocketError(.protocolError, "control frame payload over 125 bytes") }
        }
        guard length <= UInt64(maxFrameSize) else {
            throw WebSocketError(.messageTooBig, "frame of \(length) bytes exceeds \(maxFrameSize)")
        }
        let maskLength = masked ? 4 : 0
        let total = headerLength + maskLength + Int(length)
        guard available >= total else { return nil }
        let payloadStart = start + headerLength + maskLength
        var payload = Array(buffer[payloadStart..<(payloadStart + Int(length))])
        if masked {
            let mask = Array(buffer[(start + headerLength)..<(start + headerLength + 4)])
            for index in payload.indices { payload[index] ^= mask[index & 3] }
        }
        start += total
        return Frame(fin: fin, opcode: opcode, payload: payload)
    }
}
