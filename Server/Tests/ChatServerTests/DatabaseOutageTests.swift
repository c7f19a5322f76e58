import ChatServer
import Foundation
import OfflineChatProtocol
import Testing

/// A node that loses its database answers 503 for as long as it lasts (health included, so a
/// load balancer sends clients elsewhere), never a wrong answer, and recovers by itself.
@Suite(.enabled(if: LiveServer.postgres != nil)) struct DatabaseOutageTests {
    @Test func cutConnectionsAnswer503AndTheNodeRecovers() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        try await server.send("before", from: alice, to: "bob")
        let url = try String(
            contentsOf: server.dataDirectory.appendingPathComponent("test-database-url"), encoding: .utf8)
        let database = String(url.split(separator: "/").last!)
        let admin = try PostgresConnection(url: LiveServer.postgres! + "/postgres")

        // Cut: no new connections, and every one the node holds terminated.
        try admin.execute("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
        try admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)'")
        let health = try await server.request("GET", Endpoints.health, admin: true)
        #expect(try health.status == 503 && health.decode(HealthResponse.self).database == "unreachable")
        for _ in 0..<3 {
            let read = try await server.request("GET", Endpoints.conversations, token: alice)
            #expect(read.status == 503 && read.error?.code == .unavailable, "\(read.status)")
            let write = try await server.request(
                "POST", Endpoints.messages, token: alice,
                json: SendMessageRequest(muid: "during", receiver: "bob", text: "during"))
            #expect(write.status == 503 && write.error?.code == .unavailable, "\(write.status)")
        }

        // Back: the node reconnects on its own; the send refused during the cut was not made,
        // and the client's retry of it makes it once.
        try admin.execute("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
        #expect(try await server.request("GET", Endpoints.health).status == 200)
        let retried = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(muid: "during", receiver: "bob", text: "during"))
        #expect(retried.status == 201)
        let history = try await server.request(
            "GET", "\(Endpoints.conversations)/\(ConversationPayload.directID("alice", "bob"))/messages",
            token: alice
        ).decode([MessagePayload].self)
        #expect(history.map(\.text) == ["before", "during"])
    }
}
