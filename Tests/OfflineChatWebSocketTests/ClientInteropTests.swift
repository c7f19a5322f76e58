import Foundation
import OfflineChatServerProcess
import OfflineChatWebSocket
import Testing

/// Python's `websockets` server as the peer of our Linux client.
final class PythonEchoServer {
    let process = Process()
    let stdin = Pipe()
    let port: Int

    init() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Interop/echo_server.py")
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = stdout.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw ConnectionError("echo server exited before printing its port") }
            line += chunk
        }
        port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    var url: URL { URL(string: "ws://127.0.0.1:\(port)/")! }

    deinit {
        try? stdin.fileHandleForWriting.close()
        ServerProcess.waitForExit(process)
    }
}

@Suite(.serialized) struct ClientInteropTests {
    @Test func textAndBinaryMessagesEchoThroughARealServer() throws {
        let server = try PythonEchoServer()
        let client = try WebSocketClient.connect(to: server.url)
        try client.send(text: "hello, wörld 👋")
        #expect(try client.receive() == .text("hello, wörld 👋"))
        let blob = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 * 31) }
        try client.send(binary: blob)
        #expect(try client.receive() == .binary(blob))
        client.close()
        #expect(try client.receive() == .close(.normal, ""))
    }

    @Test func aFragmentedMessageFromUsArrivesWhole() throws {
        let server = try PythonEchoServer()
        let client = try WebSocketClient.connect(to: server.url)
        try client.send(Frame(fin: false, opcode: .text, payload: Array("frag".utf8)))
        try client.send(Frame(fin: false, opcode: .continuation, payload: Array("men".utf8)))
        try client.send(Frame(fin: true, opcode: .continuation, payload: Array("ted".utf8)))
        #expect(try client.receive() == .text("fragmented"))
        client.close()
    }

    @Test func theServersPingIsAnsweredAndItsPongReachesUs() throws {
        let server = try PythonEchoServer()
        let client = try WebSocketClient.connect(to: server.url)
        try client.send(text: "ping-me")
        #expect(try client.receive() == .ping(Array("server-ping".utf8)))
        // The echo only comes after the server saw our pong.
        #expect(try client.receive() == .text("ping-me"))
        try client.ping([9, 9])
        #expect(try client.receive() == .pong([9, 9]))
        client.close()
    }

    @Test func theServersCloseCodeAndReasonReachUs() throws {
        let server = try PythonEchoServer()
        let client = try WebSocketClient.connect(to: server.url)
        try client.send(text: "close-4001")
        #expect(try client.receive() == .close(CloseCode(rawValue: 4001), "asked to close"))
    }

    @Test func aMessageOverTheServersLimitClosesWithTooBig() throws {
        let server = try PythonEchoServer()
        let client = try WebSocketClient.connect(to: server.url)
        try client.send(binary: Array(repeating: 1, count: (1 << 20) + 1))
        #expect(
            try client.receive() == .close(.messageTooBig, "frame with 1048577 bytes exceeds limit of 1048576 bytes"))
    }

    @Test func connectingToAClosedPortFailsWithAClearError() throws {
        let server = try PythonEchoServer()
        let port = server.port
        _ = consume server
        let error = #expect(throws: ConnectionError.self) {
            try WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(port)/")!)
        }
        #expect(error?.reason.contains("cannot connect") == true)
    }

    @Test func aNonWebSocketURLIsRefused() {
        #expect(throws: ConnectionError.self) {
            try WebSocketClient.connect(to: URL(string: "https://example.invalid/")!)
        }
    }
}
