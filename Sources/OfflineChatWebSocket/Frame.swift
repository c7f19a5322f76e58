/// A frame's opcode (RFC 6455 §5.2).
public enum Opcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong: at most 125 bytes, never fragmented.
    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One frame on the wire, unmasked.
public struct Frame: Equatable, Sendable {
    public var fin: Bool
    public var opcode: Opcode
    public var payload: [UInt8]

    public init(fin: Bool = true, opcode: Opcode, payload: [UInt8]) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// A close frame carrying `code` and a UTF-8 `reason`, cut at a character boundary to fit
    /// a control frame's 125 bytes.
    public static func close(_ code: CloseCode, reason: String = "") -> Frame {
        var payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        var fitted = Substring(reason)
        while fitted.utf8.count > 123 { fitted = fitted.dropLast() }
        payload += Array(fitted.utf8)
        return Frame(opcode: .close, payload: payload)
    }

    /// The bytes before a frame's payload (and its mask): a sender whose payload is made of
    /// parts it shares with other frames queues this, then the parts.
    public static func header(fin: Bool = true, opcode: Opcode, payloadLength: Int, masked: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode.rawValue]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch payloadLength {
        case 0...125:
            bytes.append(maskBit | UInt8(payloadLength))
        case 126...0xFFFF:
            bytes += [maskBit | 126, UInt8(payloadLength >> 8), UInt8(payloadLength & 0xFF)]
        default:
            bytes.append(maskBit | 127)
            bytes += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(payloadLength) >> UInt64(56 - $0 * 8)) }
        }
        return bytes
    }

    /// The wire bytes. A client passes a 4-byte `mask` (RFC 6455 requires it); a server passes nil.
    public func encoded(mask: [UInt8]? = nil) -> [UInt8] {
        var bytes = Self.header(fin: fin, opcode: opcode, payloadLength: payload.count, masked: mask != nil)
        bytes.reserveCapacity(bytes.count + payload.count + 4)
        if let mask {
            precondition(mask.count == 4, "a mask is 4 bytes")
            bytes += mask
            for (index, byte) in payload.enumerated() { bytes.append(byte ^ mask[index & 3]) }
        } else {
            bytes += payload
        }
        return bytes
    }
}

/// Which end of the connection is decoding: the server demands masked frames, the client unmasked.
public enum Role: Sendable {
    case client
    case server
}
