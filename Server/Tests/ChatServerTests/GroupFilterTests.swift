import Foundation
import OfflineChatProtocol
import Testing

/// The `GroupsRequest`, `GroupMembersRequest` and one-sender `MessagesRequest` filters on a
/// seeded data set.
@Suite struct GroupFilterTests {
    @Test func theGroupsListFiltersByJoinedSearchAndTags() async throws {
        let server = try InProcessServer()
        let owner = try await server.user("owner")
        let bob = try await server.user("bob")
        try await server.group("alpha", tags: ["work"], name: "Alpha Team", by: owner)
        try await server.group("beta", tags: ["fun"], name: "Beta 100%", by: owner)
        try await server.group("gamma", .password, password: "pw", tags: ["work", "fun"], name: "Gamma", by: owner)
        try await server.group("delta", .private, name: "Delta", by: owner)
        try await server.group("epsilon", .private, tags: ["work"], name: "Epsilon", by: owner)
        try await server.addMember("bob", to: "epsilon", by: owner)
        _ = try await server.request("POST", "\(Endpoints.groups)/beta/join", token: bob)

        func guids(_ query: String, token: String) async throws -> [String] {
            try await server.request("GET", Endpoints.groups + query, token: token).decode(Page<GroupPayload>.self)
                .items.map(\.guid)
        }
        #expect(
            try await guids("", token: bob) == ["alpha", "beta", "epsilon", "gamma"], "private groups only when joined")
        #expect(try await guids("", token: owner) == ["alpha", "beta", "delta", "epsilon", "gamma"])
        #expect(try await guids("?joinedOnly=true", token: bob) == ["beta", "epsilon"])
        #expect(try await guids("?searchKeyword=team", token: bob) == ["alpha"])
        #expect(try await guids("?searchKeyword=100%25", token: bob) == ["beta"], "% matches itself")
        #expect(try await guids("?searchKeyword=ta", token: bob) == ["beta"], "delta matches but is private")
        #expect(try await guids("?searchKeyword=ta", token: owner) == ["beta", "delta"])
        #expect(try await guids("?tags=work", token: bob) == ["alpha", "epsilon", "gamma"])
        #expect(try await guids("?tags=fun&joinedOnly=true", token: bob) == ["beta"])

        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try await server.request(
                "GET", Endpoints.groups + "?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""), token: owner
            )
            .decode(Page<GroupPayload>.self)
            #expect(page.items.count <= 2)
            seen += page.items.map(\.guid)
            cursor = page.next
        } while cursor != nil
        #expect(seen == ["alpha", "beta", "delta", "epsilon", "gamma"])
        #expect(try await server.request("GET", Endpoints.groups + "?joinedOnly=maybe", token: bob).status == 400)
    }

    @Test func theMembersListFiltersBySearchScopeAndStatus() async throws {
        let server = try LiveServer()
        let owner = try await server.user("owner", name: "Olivia")
        try await server.group("g", by: owner)
        for (uid, name, scope) in [
            ("ann", "Ann Admin", GroupScope.admin), ("mo", "Mo", .moderator), ("pat", "Patricia", .participant),
            ("pete", "Pete", .participant)
        ] {
            _ = try await server.user(uid, name: name)
            try await server.addMember(uid, to: "g", scope: scope, by: owner)
        }
        let pete = try await server.token("pete")
        let (socket, _) = try server.realtime(pete)
        defer { _ = socket }

        func uids(_ query: String) async throws -> [String] {
            try await server.request("GET", "\(Endpoints.groups)/g/members\(query)", token: owner)
                .decode(Page<GroupMemberPayload>.self).items.map(\.user.uid)
        }
        #expect(try await uids("") == ["ann", "mo", "owner", "pat", "pete"])
        #expect(try await uids("?scopes=participant") == ["pat", "pete"])
        #expect(try await uids("?scopes=owner,admin") == ["ann", "owner"])
        #expect(try await uids("?searchKeyword=pat") == ["pat"])
        #expect(try await uids("?searchKeyword=olivia") == ["owner"], "search covers names")
        #expect(try await uids("?status=online") == ["pete"])
        #expect(try await uids("?status=offline&scopes=participant") == ["pat"])
        #expect(try await uids("?limit=2").count == 2)
        let page = try await server.request("GET", "\(Endpoints.groups)/g/members?limit=2&cursor=mo", token: owner)
            .decode(Page<GroupMemberPayload>.self)
        #expect(page.items.map(\.user.uid) == ["owner", "pat"] && page.next == "pat")
        #expect(
            try await server.request("GET", "\(Endpoints.groups)/g/members?scopes=king", token: owner).status == 400)
        let members = try await server.request("GET", "\(Endpoints.groups)/g/members?searchKeyword=pete", token: owner)
            .decode(Page<GroupMemberPayload>.self)
        #expect(members.items.first?.user.status == "online" && members.items.first?.scope == .participant)
    }

    @Test func oneSendersMessagesInAGroup() async throws {
        let server = try InProcessServer()
        let owner = try await server.user("owner")
        let bob = try await server.user("bob")
        try await server.group("g", by: owner)
        try await server.addMember("bob", to: "g", by: owner)
        for index in 0..<6 {
            _ = try await server.sendToGroup("m\(index)", from: index % 3 == 0 ? bob : owner, to: "g")
        }
        let bobs = try await server.groupMessages("g", token: owner, query: "&uid=bob").decode([MessagePayload].self)
        #expect(bobs.map(\.text) == ["m0", "m3"])
        let viaSender = try await server.groupMessages("g", token: owner, query: "&sender=bob").decode(
            [MessagePayload].self)
        #expect(viaSender == bobs)
        let owners = try await server.groupMessages("g", token: bob, query: "&uid=owner&categories=message").decode(
            [MessagePayload].self)
        #expect(owners.map(\.text) == ["m1", "m2", "m4", "m5"], "the owner's action message is filtered by category")
        #expect(try await server.groupMessages("g", token: bob, query: "&uid=owner&sender=bob").status == 400)
    }
}
