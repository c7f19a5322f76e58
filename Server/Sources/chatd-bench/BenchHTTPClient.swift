import ChatServer
import Foundation
import OfflineChatProtocol
import OfflineChatWebSocket

/// A minimal keep-alive HTTP/1.1 client over one blocking socket, so the benchmark measures
/// chatd rather than a client library.
final class BenchHTTPClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    let host: String

    init(port: Int) throws {
        fd = try Socket.connect(host: "127.0.0.1", port: port)
        host = "127.0.0.1:\(port)"
    }

    deinit { Socket.close(fd) }

    /// Sends one request and returns (status, body). The answer's head is read as bytes:
    /// chatd's status line and its `Content-Length` header (libmicrohttpd's spelling, or
    /// HAProxy's `content-length` in front of a cluster). With
    /// `keepingLast` only the body's last bytes are returned, none with 0 (as wrk does: a copy
    /// the health baseline does not make would count against the path measured).
    func request(
        _ method: String, _ path: String, token: String? = nil, body: [UInt8] = [], keepingLast: Int? = nil
    ) throws -> (Int, [UInt8]) {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Length: \(body.count)\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if !body.isEmpty { head += "Content-Type: application/json\r\n" }
        try Socket.writeAll(fd, Array((head + "\r\n").utf8) + body)
        var headEnd: Int?
        while true {
            headEnd = buffer.withUnsafeBytes { find(Self.terminator, in: $0) }
            if headEnd != nil { break }
            try fill()
        }
        let bodyStart = headEnd! + Self.terminator.count
        let parsed = buffer.withUnsafeBytes { bytes -> (status: Int, length: Int)? in
            let head = UnsafeRawBufferPointer(rebasing: bytes[..<bodyStart])
            // "HTTP/1.1 201 …": the status is the three digits after the first space.
            guard head.starts(with: Self.statusLine), head.count > 12,
                head[9..<12].allSatisfy({ (48...57).contains($0) }),
                let field = find(Self.contentLength, in: head) ?? find(Self.proxiedContentLength, in: head)
            else { return nil }
            var length = 0
            for byte in head[(field + Self.contentLength.count)...] {
                guard (48...57).contains(byte) else { break }
                length = length * 10 + Int(byte) - 48
            }
            return (head[9..<12].reduce(0) { $0 * 10 + Int($1) - 48 }, length)
        }
        guard let (status, length) = parsed else {
            throw ConnectionError("an answer without an HTTP/1.1 status line or a Content-Length")
        }
        while buffer.count < bodyStart + length { try fill() }
        let responseBody = Array(
            buffer[(bodyStart + length - min(length, keepingLast ?? length))..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        return (status, responseBody)
    }

    private static let statusLine = Array("HTTP/1.1 ".utf8)
    private static let terminator = Array("\r\n\r\n".utf8)
    private static let contentLength = Array("\r\nContent-Length: ".utf8)
    private static let proxiedContentLength = Array("\r\ncontent-length: ".utf8)

    private func fill() throws {
        let chunk = try Socket.readSome(fd)
        guard !chunk.isEmpty else { throw ConnectionError("chatd closed the connection") }
        buffer += chunk
    }
}

/// The end of a changelog page (`…"cursor":"…","hasMore":…}`, a request's kept tail): where
/// the next page starts, and whether there is one.
func pageEnd(_ tail: [UInt8]) throws -> (cursor: String, hasMore: Bool) {
    let end = String(decoding: tail, as: UTF8.self)
    guard let start = end.range(of: "\"cursor\":\"", options: .backwards) else {
        throw ConnectionError("no cursor")
    }
    return (String(end[start.upperBound...].prefix { $0 != "\"" }), end.contains("\"hasMore\":true"))
}

extension BenchHTTPClient {
    /// `POST /v1/messages` as the token's user; anything but 201 throws.
    func send(_ message: SendMessageRequest, token: String) throws {
        let (status, _) = try request(
            "POST", "/v1/messages", token: token, body: try CompactJSONEncoder().encode(message))
        guard status == 201 else { throw ConnectionError("send answered \(status)") }
    }
}
