import Foundation
import OfflineChatProtocol
import OfflineChatServerProcess
import OfflineChatWebSocket
import Testing

extension LiveServer {
    /// A realtime socket for `token`, past its hello.
    func realtime(_ token: String) throws -> (socket: WebSocketClient, hello: RealtimeEnvelope) {
        let socket = try WebSocketClient.connect(
            to: URL(string: "ws://127.0.0.1:\(port)\(Endpoints.realtime)")!,
            headers: ["Authorization": "Bearer \(token)"])
        return (socket, try socket.nextEnvelope())
    }
}

extension WebSocketClient {
    /// The next JSON envelope, skipping pings and pongs.
    func nextEnvelope() throws -> RealtimeEnvelope {
        while true {
            switch try receive() {
            case .text(let json): return try JSONDecoder().decode(RealtimeEnvelope.self, from: Data(json.utf8))
            case .ping, .pong: continue
            case let other: throw LiveServer.Failure("expected an envelope, got \(other)")
            }
        }
    }
}

@Suite(.serialized) struct RealtimeTests {
    @Test func eventsArriveInChangeSequenceOrderMatchingTheChangelog() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        _ = try await server.user("carol")
        let (socket, hello) = try server.realtime(bob)
        #expect(hello.type == .hello && hello.uid == "bob")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<25 {
                        let message = try await server.send("w\(worker) \(index)", from: alice, to: "bob")
                        if index % 5 == 0 {
                            _ = try await server.request("DELETE", "\(Endpoints.messages)/\(message.id)", token: alice)
                        }
                    }
                }
            }
            // Alice and carol's conversation must not reach bob.
            group.addTask { try await server.send("not for bob", from: alice, to: "carol") }
            try await group.waitForAll()
        }
        let page = try await server.request("GET", Endpoints.changes + "?cursor=\(hello.cursor!)", token: bob).decode(
            ChangelogPage.self)
        #expect(page.changes.count == 120)
        var received: [ChangePayload] = []
        var cursors: [String] = []
        while received.count < page.changes.count {
            let envelope = try socket.nextEnvelope()
            if let change = envelope.change {
                received.append(change)
                cursors.append(try #require(envelope.cursor, "every change carries the cursor after it"))
            }
        }
        #expect(received == page.changes)
        #expect(received.map(\.seq) == received.map(\.seq).sorted())
        // Resuming from a live change's cursor replays exactly the changes after it.
        for index in [0, 41, 118, 119] {
            let rest = try await server.request("GET", Endpoints.changes + "?cursor=\(cursors[index])", token: bob)
                .decode(ChangelogPage.self)
            #expect(rest.changes == Array(received[(index + 1)...]), "from change \(index)")
        }
        socket.close()
    }

    @Test func typingIndicatorsReachThePeerWithTheSender() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let (aliceSocket, _) = try server.realtime(alice)
        let (bobSocket, _) = try server.realtime(bob)
        let envelope = RealtimeEnvelope(
            type: .typing, typing: TypingPayload(sender: "mallory", receiver: "bob", isTyping: true))
        try aliceSocket.send(text: String(decoding: try JSONEncoder().encode(envelope), as: UTF8.self))
        let typing = try bobSocket.nextEnvelope()
        #expect(typing.type == .typing)
        #expect(typing.typing?.sender == "alice", "the server sets the sender, not the client")
        #expect(typing.typing?.isTyping == true)
    }

    @Test func anUnauthenticatedUpgradeIsRefused() async throws {
        let server = try LiveServer()
        #expect(throws: ConnectionError.self) {
            try WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)\(Endpoints.realtime)")!)
        }
        // A token in the url ends up in proxy logs: refused unless chatd is told otherwise.
        let token = try await server.user("alice")
        #expect(throws: ConnectionError.self) {
            try WebSocketClient.connect(
                to: URL(string: "ws://127.0.0.1:\(server.port)\(Endpoints.realtime)?token=\(token)")!)
        }
        let lenient = try LiveServer(arguments: ["--allow-query-token"])
        let lenientToken = try await lenient.user("alice")
        let viaQuery = try WebSocketClient.connect(
            to: URL(string: "ws://127.0.0.1:\(lenient.port)\(Endpoints.realtime)?token=\(lenientToken)")!)
        #expect(try viaQuery.nextEnvelope().uid == "alice")
    }

    @Test func garbageFromTheClientClosesWithAProtocolCode() async throws {
        let server = try LiveServer()
        let (socket, _) = try server.realtime(try await server.user("alice"))
        try socket.send(text: "not json")
        var close: Message?
        while close == nil {
            if case .close(let code, let reason) = try socket.receive() { close = .close(code, reason) }
        }
        #expect(close == .close(.unsupportedData, "expected a typing envelope"))
        #expect(try await server.request("GET", Endpoints.health).status == 200)
    }

    @Test func theServerPingsAndDropsASilentClient() async throws {
        // The listening socket answers pings only while the test reads it: from its last read
        // to the message below must stay within 2.5 intervals (500 ms) on a loaded machine too
        // (at 0.1 s a clean run's suite once took longer and dropped it).
        let server = try LiveServer(arguments: ["--heartbeat", "0.2"])
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let (listening, _) = try server.realtime(alice)
        let (silent, _) = try server.realtime(try await server.token("alice"))
        // The listening socket answers pings (receive() pongs); ten of them span > 2.5 intervals.
        for _ in 0..<10 { #expect(try listening.receive() == .ping([])) }
        // The silent one answered none, so the server dropped it.
        var dropped = false
        for _ in 0..<100 {
            if case .close(let code, _) = try silent.receive() {
                dropped = code == .abnormal
                break
            }
        }
        #expect(dropped)
        try await server.send("alive", from: alice, to: "bob")
        #expect(try listening.nextEnvelope().change?.message?.text == "alive")
    }

    @Test func aClientThatStopsReadingIsDisconnectedAndTheServerStaysHealthy() async throws {
        let server = try LiveServer(arguments: ["--realtime-buffer", "65536"])
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let (stalled, _) = try server.realtime(bob)
        let (healthy, _) = try server.realtime(alice)
        let text = String(repeating: "x", count: 60_000)
        var sent = 0
        for _ in 0..<400 {
            try await server.send(text, from: alice, to: "bob")
            sent += 1
            _ = try healthy.nextEnvelope()
        }
        // The stalled socket drains what the kernel held, then finds the connection dropped.
        var delivered = 0
        loop: while true {
            switch try stalled.receive() {
            case .text: delivered += 1
            case .close(let code, _):
                #expect(code == .abnormal)
                break loop
            default: continue
            }
        }
        #expect(delivered < sent)
        #expect(try await server.request("GET", Endpoints.health).status == 200)
        try await server.send("still works", from: alice, to: "bob")
        #expect(try healthy.nextEnvelope().change?.message?.text == "still works")
    }

    @Test func pythonsWebsocketsClientInteroperates() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Python/realtime_client.py")
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "\(server.port)", bob, "3"]
        process.standardOutput = output
        try process.run()
        var lines: [String] = []
        var buffer = ""
        func readLine() throws -> String {
            while !buffer.contains("\n") {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw LiveServer.Failure("python client ended: \(lines)") }
                buffer += String(decoding: chunk, as: UTF8.self)
            }
            let line = String(buffer[..<buffer.firstIndex(of: "\n")!])
            buffer.removeSubrange(...buffer.firstIndex(of: "\n")!)
            lines.append(line)
            return line
        }
        let hello = try JSONDecoder().decode(RealtimeEnvelope.self, from: Data(try readLine().utf8))
        #expect(hello.uid == "bob")
        #expect(try readLine() == "ready")
        for index in 0..<3 { try await server.send("py \(index)", from: alice, to: "bob") }
        let texts = try (0..<3).map { _ in
            try JSONDecoder().decode(RealtimeEnvelope.self, from: Data(try readLine().utf8)).change?.message?.text
        }
        #expect(texts == ["py 0", "py 1", "py 2"])
        #expect(try readLine() == "pong")
        #expect(try readLine() == "closed 1000")
        #expect(ServerProcess.waitForExit(process) == 0)
    }
}

@Suite(.serialized) struct RealtimeSessionTests {
    func closeCode(of socket: WebSocketClient) throws -> (CloseCode, String) {
        while true { if case .close(let code, let reason) = try socket.receive() { return (code, reason) } }
    }

    @Test func revokingATokenClosesItsRealtimeSockets() async throws {
        let server = try LiveServer()
        let token = try await server.user("alice")
        let other = try await server.token("alice")
        let (revoked, _) = try server.realtime(token)
        let (kept, _) = try server.realtime(other)
        #expect(
            try await server.request(
                "POST", "\(Endpoints.adminTokens)/revoke", admin: true, json: RevokeTokenRequest(token: token)
            ).status == 204)
        let (code, reason) = try closeCode(of: revoked)
        #expect(code == .policyViolation && reason == "token revoked")
        _ = try await server.user("bob")
        try await server.send("still here", from: other, to: "bob")
        #expect(try kept.nextEnvelope().change?.message?.text == "still here")
    }

    @Test func anExpiredTokensRealtimeSocketIsClosed() async throws {
        let server = try LiveServer()
        _ = try await server.user("alice")
        let (socket, _) = try server.realtime(try await server.token("alice", ttlSeconds: 60))
        try await server.advanceClock(seconds: 61)
        let (code, reason) = try closeCode(of: socket)
        #expect(code == .policyViolation && reason == "token expired")
    }

    @Test func aWrongWebSocketVersionIsAnswered426WithTheSupportedVersion() async throws {
        let server = try LiveServer()
        let token = try await server.user("alice")
        let reply = try await server.request(
            "GET", Endpoints.realtime, token: token,
            headers: [
                "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "8",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="
            ])
        #expect(reply.status == 426)
        #expect(reply.headers["sec-websocket-version"] == "13")
    }
}
