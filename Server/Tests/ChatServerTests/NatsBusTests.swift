import Foundation
import OfflineChatLocking
import OfflineChatProtocol
import OfflineChatServerProcess
import Testing

@testable import ChatServer

/// The bus's own life against a real `nats-server`.
@Suite(.enabled(if: NatsServer.available))
struct NatsBusTests {
    /// Closing a connection makes NATS post its disconnect to a thread of its own, which may run
    /// after `close()` has returned and the bus is gone (chatd crashed at exit on it, in CI; this
    /// test crashed 4 runs of 4 before the fix). A closed bus tells its handler nothing more, and
    /// a freed one is never reached: many buses come and go here while NATS runs those callbacks.
    @Test func aClosedBusHearsNothingAndAFreedOneIsNeverReached() throws {
        let nats = try NatsServer()
        let heardAfterClose = Locked(0)
        for _ in 0..<100 {
            let closed = Locked(false)
            var bus: NatsBus? = try NatsBus(settings: nats.settings, seal: BusSeal(secret: Array(nats.busKey.utf8)))
            bus?.setHandler { _ in
                if closed.withLock({ $0 }) { heardAfterClose.withLock { $0 += 1 } }
            }
            bus?.close()
            closed.withLock { $0 = true }
            bus = nil
        }
        #expect(heardAfterClose.withLock { $0 } == 0, "no callback reached a bus after its close")
    }
}

extension BusAccessTests {
    /// chatd speaks TLS to a nats-server that requires it, trusting the CA it is given
    /// (`--nats-ca`); without it the connection is refused at start, with an error that names
    /// the problem and none of the secrets.
    @Test func chatdSpeaksTLSToTheBus() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nats-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try ServerProcess.selfSignedCertificate(in: directory)
        let nats = try NatsServer(tls: certificate)
        #expect(nats.url.hasPrefix("tls://"))
        let node = try LiveServer(arguments: nats.chatdArguments + ["--nats-ca", certificate.certificate.path])
        let health = try await node.request("GET", Endpoints.health, admin: true).decode(HealthResponse.self)
        #expect(health.bus == "ok")
        let untrusting = try LiveServer.run(
            ["--data", directory.appendingPathComponent("data").path, "--port", "0"] + nats.chatdArguments)
        #expect(untrusting.status != 0, "chatd trusted a certificate nobody vouched for")
        #expect(untrusting.output.contains("NATS: connect to tls://127.0.0.1:\(nats.port): SSL Error"))
        #expect(!untrusting.output.contains(nats.password) && !untrusting.output.contains(nats.busKey))
    }
}

extension NatsServer {
    /// What chatd's flags say, as settings.
    var settings: BusSettings {
        var settings = BusSettings(url: url)
        settings.user = user
        settings.password = password
        return settings
    }
}

/// The bus as chatd's cluster runs nats-server (`scripts/nats.conf`): nobody without
/// credentials gets on, chatd's user stays on chatd's subjects, and another account on the same
/// server neither hears chatd nor reaches it.
@Suite(.enabled(if: NatsServer.available))
struct BusAccessTests {
    @Test func aClientWithoutCredentialsCanNeitherSubscribeNorPublish() throws {
        let nats = try NatsServer()
        for refused in [try NatsWire(nats), try NatsWire(nats, user: nats.user, password: "a guess")] {
            #expect(refused.greeting.contains("Authorization Violation"), "\(refused.greeting)")
        }
        let node = try NatsWire(nats, user: nats.user, password: nats.password)
        let listener = try NatsWire(nats, user: nats.user, password: nats.password)
        let other = try NatsWire(nats, user: nats.otherUser, password: nats.otherPassword)
        #expect(node.accepted && listener.accepted && other.accepted)
        try listener.subscribe("chatd.>")
        try other.subscribe(">")
        _ = (try listener.flush(), try other.flush())

        try node.publish("chatd.u.bob", Array("for chatd's nodes".utf8))
        _ = try node.flush()
        #expect(try listener.flush().messages.map(\.subject) == ["chatd.u.bob"], "the bus works for chatd")
        #expect(try other.flush().messages.isEmpty, "another account hears nothing of chatd's")

        try other.publish("chatd.all", Array("r\nforged".utf8))
        _ = try other.flush()
        #expect(try listener.flush().messages.isEmpty, "and reaches none of chatd's subjects")

        try node.subscribe("elsewhere.>", id: 2)
        try node.publish("elsewhere.x", Array("out".utf8))
        let outside = try node.flush().errors
        #expect(outside.count == 2 && outside.allSatisfy { $0.contains("Permissions Violation") }, "\(outside)")
    }
}
