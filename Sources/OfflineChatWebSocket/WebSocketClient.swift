import Foundation
import OfflineChatLocking

/// An RFC 6455 client over a blocking POSIX socket (`ws://`, or `wss://` with OpenSSL), for Linux (where Foundation's
/// `URLSessionWebSocketTask` does not work). One thread reads with `receive()`; any thread may send.
///
/// ```swift
/// let socket = try WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:8080/v1/realtime")!,
///                                          headers: ["Authorization": "Bearer \(token)"])
/// try socket.send(text: "{\"type\":\"typing\"}")
/// while case .text(let json) = try socket.receive() { print(json) }
/// ```
public final class WebSocketClient: Sendable {
    private let stream: any ByteStream
    private let reader: Locked<WebSocketParser>
    private let writer = Locked(false)  // true once a close frame was sent
    private let closed = Locked(false)

    private init(stream: any ByteStream, parser: WebSocketParser) {
        self.stream = stream
        self.reader = Locked(parser)
    }

    /// Opens a connection (`ws://`, or `wss://` verified against the system's trust store
    /// plus the PEM file `trustedCertificates`) and performs the opening handshake.
    public static func connect(
        to url: URL, headers: [String: String] = [:], maxMessageSize: Int = 16 << 20,
        trustedCertificates: String? = nil
    ) throws(ConnectionError) -> WebSocketClient {
        guard let endpoint = Endpoint(url) else {
            throw ConnectionError("unsupported URL \(url): use ws://host:port/path or wss://")
        }
        let stream = try endpoint.connect(trustedCertificates: trustedCertificates)
        let parser = try handshake(
            on: stream, path: url, hostHeader: endpoint.hostHeader, headers: headers, maxMessageSize: maxMessageSize)
        return WebSocketClient(stream: stream, parser: parser)
    }

    /// Performs the client's opening handshake on a connected `stream` for the path and query of
    /// `url`, and returns a parser holding whatever the server sent after its `101` (its first
    /// messages may come with it). For callers that read many sockets themselves (a benchmark
    /// polling thousands of them); `connect` is this plus a blocking reader.
    public static func handshake(
        on stream: any ByteStream, path url: URL, hostHeader: String, headers: [String: String] = [:],
        maxMessageSize: Int = 16 << 20
    ) throws(ConnectionError) -> WebSocketParser {
        let key = Handshake.makeKey()
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?\(query)" }
        var request = "GET \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nUpgrade: websocket\r\n"
        request += "Connection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try stream.write(Array((request + "\r\n").utf8))
        var parser = WebSocketParser(role: .client, maxMessageSize: maxMessageSize)
        parser.append(try readHandshakeResponse(stream, key: key))
        return parser
    }

    /// Reads the HTTP response head, checks 101 and the accept value; returns bytes past the head.
    private static func readHandshakeResponse(_ stream: any ByteStream, key: String) throws(ConnectionError) -> [UInt8]
    {
        var received: [UInt8] = []
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            let chunk = try stream.read(max: 4096)
            guard !chunk.isEmpty else { throw ConnectionError("connection closed during the handshake") }
            received += chunk
            if let end = received.firstRange(of: terminator) {
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                try validate(head: head, key: key)
                return Array(received[end.upperBound...])
            }
            guard received.count < 16 << 10 else { throw ConnectionError("handshake response head too large") }
        }
    }

    private static func validate(head: String, key: String) throws(ConnectionError) {
        let lines = head.components(separatedBy: "\r\n")
        let status = lines.first ?? ""
        guard status.hasPrefix("HTTP/1.1 101") else { throw ConnectionError("server refused the upgrade: \(status)") }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard fields["upgrade"]?.lowercased() == "websocket" else {
            throw ConnectionError("missing Upgrade: websocket")
        }
        guard fields["connection"]?.lowercased().contains("upgrade") == true else {
            throw ConnectionError("missing Connection: Upgrade")
        }
        guard fields["sec-websocket-accept"] == Handshake.acceptValue(forKey: key) else {
            throw ConnectionError("wrong Sec-WebSocket-Accept")
        }
    }

    /// Sends one text message.
    public func send(text: String) throws(ConnectionError) { try send(Frame(opcode: .text, payload: Array(text.utf8))) }

    /// Sends one binary message.
    public func send(binary: [UInt8]) throws(ConnectionError) { try send(Frame(opcode: .binary, payload: binary)) }

    /// Sends a ping; the peer's pong arrives through `receive()`.
    public func ping(_ payload: [UInt8] = []) throws(ConnectionError) {
        try send(Frame(opcode: .ping, payload: payload))
    }

    /// Sends any frame, masked as a client must.
    public func send(_ frame: Frame) throws(ConnectionError) {
        var generator = SystemRandomNumberGenerator()
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let bytes = frame.encoded(mask: mask)
        let result: Result<Void, ConnectionError> = writer.withLock { closeSent in
            if closeSent { return .failure(ConnectionError("the connection is closing")) }
            if frame.opcode == .close { closeSent = true }
            do throws(ConnectionError) { try stream.write(bytes) } catch { return .failure(error) }
            return .success(())
        }
        try result.get()
    }

    /// Blocks until the next message. Pings are answered with a pong (and also returned);
    /// a close from the peer is answered and returned, after which the socket is shut.
    /// A protocol violation closes the connection with its code and throws.
    public func receive() throws -> Message {
        while true {
            let next: Result<Message?, WebSocketError> = reader.withLock { parser in
                do throws(WebSocketError) { return .success(try parser.next()) } catch { return .failure(error) }
            }
            switch next {
            case .failure(let error):
                try? send(Frame.close(error.code, reason: error.reason))
                shutdown()
                throw error
            case .success(let message?):
                switch message {
                case .ping(let payload): try? send(Frame(opcode: .pong, payload: payload))
                case .close(let code, _):
                    try? send(Frame.close(code == .noStatus ? .normal : code))
                    shutdown()
                default: break
                }
                return message
            case .success(nil):
                if closed.current { throw ConnectionError("the connection is closed") }
                let bytes = try stream.read(max: 64 << 10)
                guard !bytes.isEmpty else {
                    shutdown()
                    return .close(.abnormal, "connection dropped")
                }
                reader.withLock { $0.append(bytes) }
            }
        }
    }

    /// Starts the closing handshake; `receive()` then returns the peer's close.
    public func close(_ code: CloseCode = .normal, reason: String = "") {
        try? send(Frame.close(code, reason: reason))
    }

    /// Drops the connection at once; a blocked `receive()` returns `.close(.abnormal, …)`.
    public func shutdown() {
        closed.withLock { $0 = true }
        stream.shutdown()
    }
}
