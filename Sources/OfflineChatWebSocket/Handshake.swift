import Foundation

/// The RFC 6455 opening handshake's key arithmetic, shared by server and client.
public enum Handshake {
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`.
    public static func acceptValue(forKey key: String) -> String {
        Data(SHA1.hash(Array((key.trimmingCharacters(in: .whitespaces) + guid).utf8))).base64EncodedString()
    }

    /// A fresh random `Sec-WebSocket-Key` (16 random bytes, base64).
    public static func makeKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }

    /// True when `key` is a valid client key: base64 of exactly 16 bytes.
    public static func isValidKey(_ key: String) -> Bool {
        Data(base64Encoded: key.trimmingCharacters(in: .whitespaces))?.count == 16
    }
}
