import Foundation
import OfflineChatProtocol
import OfflineChatServerProcess
import OfflineChatWebSocket
import Testing

/// Several chatd nodes on one PostgreSQL database with NATS between them: a change made on
/// one node reaches sockets on every other, in position order, exactly once.
@Suite(.enabled(if: LiveServer.postgres != nil && NatsServer.available))
struct ClusterTests {
    @Test func aChangeOnOneNodeReachesSocketsOnAnother() async throws {
        let nats = try NatsServer()
        let first = try LiveServer(arguments: nats.chatdArguments + ["--node-id", "one"])
        let second = try LiveServer(
            arguments: nats.chatdArguments + ["--node-id", "two"], dataDirectory: first.dataDirectory)
        let health = try await second.request("GET", Endpoints.health, admin: true).decode(HealthResponse.self)
        #expect(health.bus == "ok" && health.database == "ok")
        let alice = try await first.user("alice")
        let bob = try await first.user("bob")
        let (socket, hello) = try second.realtime(bob)
        for index in 0..<20 { try await first.send("from one \(index)", from: alice, to: "bob") }
        var seqs: [Int64] = []
        var texts: [String?] = []
        while seqs.count < 20 {
            let envelope = try socket.nextEnvelope()
            guard let change = envelope.change else { continue }
            seqs.append(change.seq)
            texts.append(change.message?.text)
        }
        guard case .logs(_, let start, _)? = ChangelogCursor.parse(hello.cursor ?? "") else {
            Issue.record("hello")
            return
        }
        #expect(seqs == Array((start + 1)...(start + 20)), "each position once, in order")
        #expect(texts == (0..<20).map { "from one \($0)" })
        // The receiving node counted them and their lag; the sending node counted the sends.
        let received = MetricsTests.series(
            String(decoding: try await second.request("GET", "/metrics", admin: true).body, as: UTF8.self))
        #expect(received["chatd_bus_changes_received_total"] == 20 && received["chatd_bus_lag_seconds_count"] == 20)
        #expect(received["chatd_bus_connected"] == 1 && received["chatd_realtime_sockets"] == 1)
        let sent = MetricsTests.series(
            String(decoding: try await first.request("GET", "/metrics", admin: true).body, as: UTF8.self))
        #expect(sent[#"chatd_changes_committed_total{kind="message.created"}"#] == 20)
        socket.close(.normal)
    }

    /// A group's change crosses the bus once, on the group's subject, whatever the number of
    /// its members on the other node: three members' sockets there get every message, in the
    /// group's order, from ten bus messages.
    @Test func aGroupsChangeCrossesTheBusOnce() async throws {
        let nats = try NatsServer()
        let (first, second) = try LiveServer.twoNodes(on: nats)
        let alice = try await first.user("alice")
        try await first.group("g", by: alice)
        var tokens: [String] = []
        for uid in ["bob", "carol", "dave"] {
            tokens.append(try await first.user(uid))
            try await first.addMember(uid, to: "g", by: alice)
        }
        let sockets = try tokens.map { try second.realtime($0).socket }
        defer { for socket in sockets { socket.close(.normal) } }
        let before =
            MetricsTests.series(
                String(decoding: try await second.request("GET", "/metrics", admin: true).body, as: UTF8.self)
            )["chatd_bus_changes_received_total"] ?? 0
        for index in 0..<10 { #expect(try await first.sendToGroup("m\(index)", from: alice, to: "g").status == 201) }
        for socket in sockets {
            var texts: [String?] = []
            var seqs: [Int64] = []
            while texts.count < 10 {
                let change = try socket.nextChange()
                texts.append(change.message?.text)
                seqs.append(change.seq)
            }
            #expect(texts == (0..<10).map { "m\($0)" } && seqs == seqs.sorted())
        }
        let received =
            MetricsTests.series(
                String(decoding: try await second.request("GET", "/metrics", admin: true).body, as: UTF8.self)
            )["chatd_bus_changes_received_total"] ?? 0
        #expect(received - before == 10, "one bus message a change, not one a member")
    }

    /// The bus restarts: what was published while it was down is not lost; the sockets catch
    /// up from the inbox once their node reconnects, and delivery goes on.
    @Test func changesMadeWhileTheBusIsDownStillArrive() async throws {
        var nats = try NatsServer()
        let (first, second) = try LiveServer.twoNodes(on: nats)
        let alice = try await first.user("alice")
        let bob = try await first.user("bob")
        let (socket, _) = try second.realtime(bob)
        try await first.send("before", from: alice, to: "bob")
        #expect(try socket.nextChange().message?.text == "before")
        nats.stop()
        try await first.send("while the bus is down", from: alice, to: "bob")
        nats = try NatsServer(port: nats.port, sameSecretsAs: nats)
        #expect(try socket.nextChange().message?.text == "while the bus is down")
        try await first.send("after", from: alice, to: "bob")
        #expect(try socket.nextChange().message?.text == "after")
        nats.stop()
    }
}

extension ClusterTests {
    /// Two nodes whose buses never meet (each on a NATS of its own): every change from the
    /// other node is a lost bus message, and still reaches the socket, in order, by the
    /// periodic catch-up from the inbox.
    @Test func lostBusMessagesCostLatencyNotCorrectness() async throws {
        let busOne = try NatsServer()
        let busTwo = try NatsServer(sameSecretsAs: busOne)
        let (first, second) = try LiveServer.twoNodes(
            on: busOne, secondBus: busTwo, secondArguments: ["--catch-up", "0.1"])
        let alice = try await first.user("alice")
        let bob = try await first.user("bob")
        let (socket, _) = try second.realtime(bob)
        for index in 0..<5 { try await first.send("lost \(index)", from: alice, to: "bob") }
        var texts: [String?] = []
        for _ in 0..<5 { texts.append(try socket.nextChange().message?.text) }
        #expect(texts == (0..<5).map { "lost \($0)" })
        try await second.send("local", from: alice, to: "bob")
        #expect(try socket.nextChange().message?.text == "local", "and the node's own changes go on")
    }
}

extension ClusterTests {
    /// Typing, blocks and token revocations made on one node act on sockets of another.
    @Test func typingBlocksAndRevocationsCrossNodes() async throws {
        let nats = try NatsServer()
        let (first, second) = try LiveServer.twoNodes(on: nats)
        let alice = try await first.user("alice")
        let bob = try await first.user("bob")
        let (aliceSocket, _) = try first.realtime(alice)
        let (bobSocket, _) = try second.realtime(bob)
        func type(_ typing: Bool) throws {
            let envelope = RealtimeEnvelope(type: .typing, typing: TypingPayload(receiver: "bob", isTyping: typing))
            try aliceSocket.send(text: String(decoding: try JSONEncoder().encode(envelope), as: UTF8.self))
        }
        try type(true)
        let typing = try bobSocket.nextEnvelope()
        #expect(typing.type == .typing && typing.typing?.sender == "alice" && typing.typing?.isTyping == true)

        // Bob blocks alice on his node; alice's node learns it and drops her typing to him.
        #expect(try await second.request("PUT", "\(Endpoints.blocks)/alice", token: bob).status == 200)
        #expect(try bobSocket.nextChange().kind == .userBlocked)
        #expect(try aliceSocket.nextChange().kind == .userBlocked)
        try type(false)
        #expect(try await second.request("DELETE", "\(Endpoints.blocks)/alice", token: bob).status == 200)
        #expect(try bobSocket.nextChange().kind == .userUnblocked)
        #expect(try aliceSocket.nextChange().kind == .userUnblocked)
        try type(true)
        let after = try bobSocket.nextEnvelope()
        #expect(after.typing?.isTyping == true, "the typing sent during the block never arrived")

        // Revoked through the first node: bob's socket on the second closes.
        #expect(
            try await first.request(
                "POST", "\(Endpoints.adminTokens)/revoke", admin: true,
                json: RevokeTokenRequest(token: bob)
            ).status == 204)
        var closed: (CloseCode, String)?
        while closed == nil {
            if case .close(let code, let reason) = try bobSocket.receive() { closed = (code, reason) }
        }
        #expect(closed?.0 == .policyViolation && closed?.1 == "token revoked")
        // The second node had checked bob's token (his socket, his block): it forgot it with
        // the same bus message, before the socket closed.
        let refused = try await second.request("GET", Endpoints.me, token: bob)
        #expect(refused.status == 401 && refused.error?.code == .tokenRevoked)
    }
}

extension ClusterTests {
    /// Presence is the cluster's: a user with a socket on one node is online on every node,
    /// and goes offline everywhere when that node dies (its heart stops; nobody cleans up).
    @Test func presenceIsSharedAndSurvivesANodesDeath() async throws {
        let nats = try NatsServer()
        let first = try LiveServer(arguments: nats.chatdArguments + ["--node-id", "one", "--catch-up", "0.1"])
        let second = try LiveServer(
            arguments: nats.chatdArguments + ["--node-id", "two", "--catch-up", "0.1"],
            dataDirectory: first.dataDirectory)
        let alice = try await first.user("alice")
        let bob = try await first.user("bob")
        func status(of uid: String, on server: LiveServer) async throws -> String? {
            try await server.request("GET", "\(Endpoints.users)/\(uid)", token: alice).decode(UserPayload.self).status
        }
        #expect(try await status(of: "bob", on: first) == "offline")
        let (socket, _) = try second.realtime(bob)
        // shared within a catch-up period
        while try await status(of: "bob", on: first) != "online" { await Task.yield() }
        #expect(try await status(of: "bob", on: second) == "online")
        _ = second.kill()
        // three periods without a heartbeat
        while try await status(of: "bob", on: first) != "offline" { await Task.yield() }
        socket.close(.normal)
    }

    /// Media live in the directory the nodes share (`--media`): an upload through one node is
    /// served by another, and named by a message sent through a third.
    @Test func anUploadThroughOneNodeIsServedByAnother() async throws {
        let media = FileManager.default.temporaryDirectory.appendingPathComponent("chatd-media-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: media) }
        let first = try LiveServer(arguments: ["--media", media.path])
        let second = try LiveServer(arguments: ["--media", media.path], dataDirectory: first.dataDirectory)
        let alice = try await first.user("alice")
        let bob = try await first.user("bob")
        let bytes = Data((0..<50_000).map { UInt8($0 % 253) })
        let attachment = try await first.upload(bytes, by: alice, contentType: "image/jpeg")
        let sent = try await second.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(muid: "m1", receiver: "bob", type: "image", attachment: attachment))
        #expect(sent.status == 201)
        let fetched = try await second.request("GET", attachment.url, token: bob)
        #expect(fetched.status == 200 && fetched.body == bytes && fetched.headers["content-type"] == "image/jpeg")
        #expect(try FileManager.default.contentsOfDirectory(atPath: media.path).count == 1)
        #expect(!FileManager.default.fileExists(atPath: first.dataDirectory.appendingPathComponent("media").path))
    }
}

extension LiveServer {
    /// Two chatd nodes on one database, the first on `nats`, the second on `secondBus` (a
    /// bus of its own: the two never hear each other) or the same one, with `secondArguments`.
    static func twoNodes(
        on nats: NatsServer, secondBus: NatsServer? = nil, secondArguments: [String] = []
    ) throws -> (LiveServer, LiveServer) {
        let first = try LiveServer(arguments: nats.chatdArguments)
        let second = try LiveServer(
            arguments: (secondBus ?? nats).chatdArguments + secondArguments, dataDirectory: first.dataDirectory)
        return (first, second)
    }
}

extension WebSocketClient {
    /// The next change on the socket, skipping typing and hello frames.
    func nextChange() throws -> ChangePayload {
        while true {
            if let change = try nextEnvelope().change { return change }
        }
    }
}
