import Foundation
import OfflineChatProtocol
import Testing

/// The `UsersRequest` builder's filters on a seeded set of users.
@Suite struct UserFilterTests {
    @Test func keywordTagsRolesAndPresenceFilter() async throws {
        let server = try LiveServer()
        let seeds: [CreateUserRequest] = [
            CreateUserRequest(uid: "alice", name: "Alice Liddell", tags: ["vip", "beta"], role: "admin"),
            CreateUserRequest(uid: "bob", name: "Bob Builder", tags: ["beta"], role: "member"),
            CreateUserRequest(uid: "carol", name: "Carol 100%", tags: [], role: "member"),
            CreateUserRequest(uid: "dave", name: "Dave", tags: ["vip"])
        ]
        for seed in seeds {
            #expect(try await server.request("POST", Endpoints.adminUsers, admin: true, json: seed).status == 201)
        }
        let alice = try await server.token("alice")
        let bob = try await server.token("bob")
        func uids(_ query: String) async throws -> [String] {
            try await server.request("GET", Endpoints.users + "?" + query, token: alice).decode(Page<UserPayload>.self)
                .items.map(\.uid)
        }
        #expect(try await uids("searchKeyword=builder") == ["bob"])
        #expect(try await uids("searchKeyword=CAR") == ["carol"])
        #expect(try await uids("searchKeyword=%25") == ["carol"])
        #expect(try await uids("tags=vip") == ["alice", "dave"])
        #expect(try await uids("tags=beta,vip&roles=member") == ["bob"])
        #expect(try await uids("roles=admin,member") == ["alice", "bob", "carol"])

        let (socket, _) = try server.realtime(bob)
        #expect(try await uids("status=online") == ["bob"])
        #expect(try await uids("status=offline") == ["alice", "carol", "dave"])
        let bobUser = try await server.request("GET", "\(Endpoints.users)/bob", token: alice).decode(UserPayload.self)
        #expect(bobUser.status == "online")
        socket.close()
        while true { if case .close = try socket.receive() { break } }
        // The server has answered our close; the next loop pass forgets the socket.
        var offline = false
        for _ in 0..<200 where !offline { offline = try await uids("status=online").isEmpty }
        #expect(offline)
        #expect(try await server.request("GET", Endpoints.users + "?status=away", token: alice).status == 400)
    }
}
