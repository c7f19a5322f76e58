import Foundation
import OfflineChatServerProcess
import OfflineChatWebSocket

/// A bare NATS client on a raw socket, speaking the text protocol as an attacker would: no
/// chatd code, no client library. Reads give up after five seconds.
final class NatsWire {
    let fd: Int32
    private var buffer: [UInt8] = []
    /// What the server said to the CONNECT: `PONG` when it took it, `-ERR '…'` when not.
    private(set) var greeting = ""

    init(_ server: NatsServer, user: String? = nil, password: String? = nil) throws {
        fd = try Socket.connect(host: "127.0.0.1", port: server.port)
        Socket.setTimeout(fd, seconds: 5)
        _ = try line()  // INFO {…}
        var options: [String: Any] = ["verbose": false, "pedantic": false, "echo": false]
        if let user, let password { (options["user"], options["pass"]) = (user, password) }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: options), as: UTF8.self)
        try write("CONNECT \(json)\r\nPING\r\n")
        greeting = try line()
    }

    deinit { Socket.close(fd) }

    var accepted: Bool { greeting == "PONG" }

    func subscribe(_ subject: String, id: Int = 1) throws { try write("SUB \(subject) \(id)\r\n") }

    func publish(_ subject: String, _ payload: [UInt8]) throws {
        try Socket.writeAll(fd, Array("PUB \(subject) \(payload.count)\r\n".utf8) + payload + Array("\r\n".utf8))
    }

    /// Waits until the server has handled everything sent before (PING, then its PONG), and
    /// returns the messages and errors that came meanwhile.
    func flush() throws -> (messages: [(subject: String, payload: [UInt8])], errors: [String]) {
        try write("PING\r\n")
        var messages: [(subject: String, payload: [UInt8])] = []
        var errors: [String] = []
        while true {
            let line = try line()
            if line == "PONG" { return (messages, errors) }
            if line.hasPrefix("-ERR") { errors.append(line) }
            if line == "PING" { try write("PONG\r\n") }
            if line.hasPrefix("MSG ") {
                let fields = line.split(separator: " ")
                let size = Int(fields.last ?? "") ?? 0
                let payload = try bytes(size + 2).dropLast(2)
                messages.append((String(fields[1]), Array(payload)))
            }
        }
    }

    /// The next message, answering the server's pings, skipping other lines.
    func nextMessage() throws -> (subject: String, payload: [UInt8]) {
        while true {
            let line = try line()
            if line == "PING" { try write("PONG\r\n") }
            guard line.hasPrefix("MSG ") else { continue }
            let fields = line.split(separator: " ")
            let payload = try bytes((Int(fields.last ?? "") ?? 0) + 2).dropLast(2)
            return (String(fields[1]), Array(payload))
        }
    }

    private func write(_ text: String) throws { try Socket.writeAll(fd, Array(text.utf8)) }

    private func line() throws -> String {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<end], as: UTF8.self).trimmingCharacters(
                    in: .whitespacesAndNewlines)
                buffer.removeSubrange(...end)
                return line
            }
            try fill()
        }
    }

    private func bytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { try fill() }
        defer { buffer.removeSubrange(..<count) }
        return Array(buffer[..<count])
    }

    private func fill() throws {
        let more = try Socket.readSome(fd)
        guard !more.isEmpty else { throw ServerProcess.Failure("nats-server closed the connection") }
        buffer += more
    }
}
