import Foundation
import OfflineChatProtocol
import OfflineChatServerProcess
import OfflineChatWebSocket
import Testing

@testable import ChatServer

/// Someone who stole chatd's own NATS credentials (or reaches a nats-server left open) is on
/// the bus: every frame is sealed with the cluster's secret, so they read nothing, and nothing
/// they write makes a client lose a message or a socket close. Revocations close sockets only
/// once the database confirms them, and one the bus never carried still closes its sockets.
@Suite(.enabled(if: LiveServer.postgres != nil && NatsServer.available))
struct BusForgeryTests {
    @Test func aStolenBusCredentialReadsNothingAndLosesNoMessage() async throws {
        let nats = try NatsServer()
        let (first, second) = try LiveServer.twoNodes(on: nats)
        let alice = try await first.user("alice")
        let bob = try await first.user("bob")
        let thief = try NatsWire(nats, user: nats.user, password: nats.password)
        try thief.subscribe("chatd.>")
        _ = try thief.flush()
        let (socket, hello) = try second.realtime(bob)
        guard case .logs(_, let start, _)? = ChangelogCursor.parse(hello.cursor ?? "") else {
            Issue.record("hello")
            return
        }
        try await first.send("the secret plan", from: alice, to: "bob")
        #expect(try socket.nextChange().message?.text == "the secret plan")
        var frames: [(subject: String, payload: [UInt8])] = []
        while !frames.contains(where: { $0.subject == NatsBus.subject("bob") }) {
            frames.append(try thief.nextMessage())
        }
        for frame in frames {
            let text = String(decoding: frame.payload, as: UTF8.self)
            #expect(!text.contains("secret plan") && !text.contains("alice") && !text.contains("bob"), "sealed")
        }

        // What the first review did, and more: a change in the clear at bob's next position
        // "from alice", bytes shaped like a sealed frame, a revocation of bob's token in the
        // clear, and a real frame captured and sent again.
        let forgedChange = "c\n\(start + 2)\nbob\n0\n{\"kind\":\"message.created\",\"message\":{\"text\":\"forged\"}}"
        try thief.publish(NatsBus.subject("bob"), Array(forgedChange.utf8))
        try thief.publish(NatsBus.subject("bob"), [BusSeal.format] + (0..<80).map { _ in UInt8.random(in: 0...255) })
        try thief.publish(NatsBus.broadcastSubject, Array("r\n\(Store.tokenHash(bob))".utf8))
        try thief.publish(NatsBus.subject("bob"), frames.first { $0.subject == NatsBus.subject("bob") }!.payload)
        _ = try thief.flush()

        try await first.send("the real one", from: alice, to: "bob")
        let real = try socket.nextChange()
        #expect(real.message?.text == "the real one" && real.seq == start + 2, "not lost to the forgery, nor a repeat")
        var refused = 0.0
        for _ in 0..<10_000 where refused < 3 {  // the other node opens them on a thread of its own
            refused =
                MetricsTests.series(
                    String(decoding: try await second.request("GET", "/metrics", admin: true).body, as: UTF8.self)
                )["chatd_bus_frames_refused_total"] ?? 0
        }
        #expect(refused == 3, "the three forgeries were counted and dropped")
        try await first.send("still open", from: alice, to: "bob")
        #expect(try socket.nextChange().message?.text == "still open", "the forged revocation closed nothing")
    }

    /// Even a revocation sealed with the cluster's own secret closes sockets only when the
    /// database says the token is revoked: one naming a valid token closes nothing, while a
    /// real one sent after it closes the other token's socket.
    @Test func aRevocationClosesSocketsOnlyWhenTheDatabaseConfirmsIt() async throws {
        let nats = try NatsServer()
        let (first, second) = try LiveServer.twoNodes(on: nats)
        let alice = try await first.user("alice")
        let bob = try await first.user("bob")
        let bobsTablet = try await first.request(
            "POST", "\(Endpoints.adminUsers)/bob/tokens", admin: true, json: [String: Int]()
        ).decode(TokenResponse.self).authToken
        let (phone, _) = try second.realtime(bob)
        let (tablet, _) = try second.realtime(bobsTablet)

        let insider = try NatsBus(settings: nats.settings, seal: BusSeal(secret: Array(nats.busKey.utf8)))
        defer { insider.close() }
        insider.publishRevocation(tokenHash: Store.tokenHash(bob))
        #expect(
            try await first.request(
                "POST", "\(Endpoints.adminTokens)/revoke", admin: true, json: RevokeTokenRequest(token: bobsTablet)
            ).status == 204)
        #expect(try HostileInputTests.closing(tablet) == .close(.policyViolation, "token revoked"))
        try await first.send("the phone stays", from: alice, to: "bob")
        #expect(try phone.nextChange().message?.text == "the phone stays")
    }

    /// A revocation the bus never carries (here each node has a NATS of its own) still closes
    /// the token's sockets on the other node, from the database, within `--token-check`.
    @Test func aRevocationLostOnTheBusStillClosesTheSocket() async throws {
        let busOne = try NatsServer()
        let busTwo = try NatsServer(sameSecretsAs: busOne)
        let (first, second) = try LiveServer.twoNodes(
            on: busOne, secondBus: busTwo, secondArguments: ["--token-check", "0.1"])
        _ = try await first.user("alice")
        let bob = try await first.user("bob")
        let (socket, _) = try second.realtime(bob)
        #expect(
            try await first.request(
                "POST", "\(Endpoints.adminTokens)/revoke", admin: true, json: RevokeTokenRequest(token: bob)
            ).status == 204)
        #expect(try HostileInputTests.closing(socket) == .close(.policyViolation, "token revoked"))
    }
}

extension BusForgeryTests {
    /// The second review's typing flood, against two nodes: 1,000 frames to a 100-member group
    /// made 99,000 bus messages. Now each frame a socket may send is one bus message whatever the
    /// group's size, a socket gets a burst and a steady rate (the rest dropped), and one that
    /// keeps flooding is closed; a member on the other node still sees the typing.
    @Test func aTypingFloodCostsNeitherTheBusNorTheGroup() async throws {
        let nats = try NatsServer()
        let (first, second) = try LiveServer.twoNodes(on: nats)
        let alice = try await first.user("alice")
        let bob = try await first.user("bob")
        try await first.group("crowd", by: alice)
        #expect(try await first.addMember("bob", to: "crowd", by: alice) == 201)
        for index in 0..<98 {
            _ = try await first.user("u\(index)")
            #expect(try await first.addMember("u\(index)", to: "crowd", by: alice) == 201)
        }
        let (typist, _) = try first.realtime(alice)
        let (listener, _) = try second.realtime(bob)
        let tap = try NatsWire(nats, user: nats.user, password: nats.password)
        try tap.subscribe("chatd.>")
        _ = try tap.flush()

        let frame = #"{"type":"typing","typing":{"receiver":"crowd","receiverType":"group","isTyping":true}}"#
        for _ in 0..<1_000 { try? typist.send(text: frame) }
        #expect(try HostileInputTests.closing(typist) == .close(.policyViolation, "typing frames too fast"))
        let heard = try listener.nextEnvelope()
        #expect(heard.type == .typing && heard.typing?.sender == "alice", "a member on the other node")
        let published = try tap.flush().messages.count
        // The burst, and what the rate lets through while a loaded machine reads the flood.
        #expect(published >= 1 && published <= Int(TypingBudget.burst) + 10, "\(published) bus messages")
    }
}
