/// A WebSocket close status code (RFC 6455 §7.4).
public struct CloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let normal = CloseCode(rawValue: 1000)
    public static let goingAway = CloseCode(rawValue: 1001)
    public static let protocolError = CloseCode(rawValue: 1002)
    public static let unsupportedData = CloseCode(rawValue: 1003)
    /// Never sent: stands for "the close frame had no code".
    public static let noStatus = CloseCode(rawValue: 1005)
    /// Never sent: stands for "the connection dropped without a close frame".
    public static let abnormal = CloseCode(rawValue: 1006)
    public static let invalidPayload = CloseCode(rawValue: 1007)
    public static let policyViolation = CloseCode(rawValue: 1008)
    public static let messageTooBig = CloseCode(rawValue: 1009)
    public static let internalError = CloseCode(rawValue: 1011)
    /// The server is at capacity for now (IANA's registry, after RFC 6455): reconnect later.
    public static let tryAgainLater = CloseCode(rawValue: 1013)

    /// Whether a peer may put this code on the wire.
    public var isSendable: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { "\(rawValue)" }
}

/// A protocol violation found while decoding; the connection must close with `code`.
public struct WebSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: CloseCode
    public let reason: String
    public init(_ code: CloseCode, _ reason: String) {
        self.code = code
        self.reason = reason
    }
    public var description: String { "WebSocket \(code): \(reason)" }
}
