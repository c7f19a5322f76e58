import ChatProtocol
import Foundation
import WebSocket

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

    /// Sends one request and returns (status, body).
    func request(_ method: String, _ path: String, token: String? = nil, body: [UInt8] = []) throws -> (Int, [UInt8]) {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Length: \(body.count)\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if !body.isEmpty { head += "Content-Type: application/json\r\n" }
        try Socket.writeAll(fd, Array((head + "\r\n").utf8) + body)
        let terminator = Array("\r\n\r\n".utf8)
        var headEnd: Range<Int>?
        while headEnd == nil {
            headEnd = buffer.firstRange(of: terminator)
            if headEnd == nil { try fill() }
        }
        let headText = String(decoding: buffer[..<headEnd!.lowerBound], as: UTF8.self)
        let status = Int(headText.split(separator: " ").dropFirst().first ?? "") ?? 0
        var length = 0
        for line in headText.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
        let bodyStart = headEnd!.upperBound
        while buffer.count < bodyStart + length { try fill() }
        let responseBody = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        return (status, responseBody)
    }

    private func fill() throws {
        let chunk = try Socket.readSome(fd)
        guard !chunk.isEmpty else { throw ConnectionError("chatd closed the connection") }
        buffer += chunk
    }
}

extension BenchHTTPClient {
    /// `POST /v1/messages` as the token's user; anything but 201 throws.
    func send(_ message: SendMessageRequest, token: String) throws {
        let (status, _) = try request(
            "POST", "/v1/messages", token: token, body: Array(try JSONEncoder().encode(message)))
        guard status == 201 else { throw ConnectionError("send answered \(status)") }
    }
}
