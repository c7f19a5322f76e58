import Foundation
import OfflineChatProtocol
import OfflineChatWebSocket
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The operator's API under `/v1/admin` beyond users and tokens (what the console at `/admin`
/// drives): searching everyone, acting on any group in its owner's name, reading a
/// conversation and deleting a message for everyone, all behind the admin key and audited.
@Suite struct OperatorTests {
    /// The newest audit entries as "action target".
    static func trail(_ server: some ChatdUnderTest, _ count: Int) async throws -> [String] {
        let page = try await server.request("GET", Endpoints.adminAudit, admin: true).decode(Page<AuditEntry>.self)
        return page.items.prefix(count).map { "\($0.action) \($0.target)" }
    }

    @Test func usersAreSearchedWithTheirSuspensionAndTokens() async throws {
        let server = try InProcessServer()
        _ = try await server.user("alice", name: "Alice Liddell")
        _ = try await server.token("alice")
        _ = try await server.user("bob", name: "Bob")
        _ = try await server.user("carol", name: "Carol Alison")
        #expect(try await server.request("PUT", "\(Endpoints.adminUsers)/bob/suspension", admin: true).status == 200)

        let found = try await server.request("GET", "\(Endpoints.adminUsers)?searchKeyword=ali", admin: true)
            .decode(Page<AdminUserPayload>.self)
        #expect(found.items.map(\.user.uid) == ["alice", "carol"], "uid or name, case-insensitive")
        #expect(found.items.map(\.activeTokens) == [2, 1])
        #expect(found.items.allSatisfy { $0.user.status == "offline" && $0.suspendedAt == nil })
        let bob = try await server.request("GET", "\(Endpoints.adminUsers)/bob", admin: true)
            .decode(AdminUserPayload.self)
        #expect(bob.suspendedAt != nil && bob.activeTokens == 0)
        #expect(try await server.request("GET", "\(Endpoints.adminUsers)/ghost", admin: true).status == 404)
        for dots in [".", ".."] {  // a path segment that browsers and proxies resolve away
            let refused = try await server.request(
                "POST", Endpoints.adminUsers, admin: true, json: CreateUserRequest(uid: dots))
            #expect(refused.status == 422, "uid \(dots)")
        }

        var seen: [String] = []
        var cursor = ""
        repeat {
            let page = try await server.request("GET", "\(Endpoints.adminUsers)?limit=2\(cursor)", admin: true)
                .decode(Page<AdminUserPayload>.self)
            seen += page.items.map(\.user.uid)
            cursor = page.next.map { "&cursor=\($0)" } ?? ""
        } while !cursor.isEmpty
        #expect(seen == ["alice", "bob", "carol"], "paged in uid order")
        for path in [Endpoints.adminUsers, "\(Endpoints.adminUsers)/bob", Endpoints.adminGroups] {
            #expect(try await server.request("GET", path).status == 401, "\(path) needs the key")
        }
    }

    @Test func revokingAUsersTokensClosesTheirSocketsAndLetsThemSignInAgain() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let (socket, _) = try server.realtime(alice)
        let reply = try await server.request("DELETE", "\(Endpoints.adminUsers)/alice/tokens", admin: true)
        #expect(try reply.decode(RevokedTokensResponse.self) == RevokedTokensResponse(uid: "alice", revokedTokens: 1))
        let (code, reason) = try RealtimeSessionTests().closeCode(of: socket)
        #expect(code == .policyViolation && reason == "token revoked")
        #expect(try await server.request("GET", Endpoints.me, token: alice).status == 401)
        #expect(try await server.request("GET", Endpoints.me, token: try await server.token("alice")).status == 200)
        #expect(try await server.request("DELETE", "\(Endpoints.adminUsers)/ghost/tokens", admin: true).status == 404)
        #expect(try await Self.trail(server, 2) == ["token.issue alice", "token.revoke.all alice"])
    }

    @Test func theOperatorRunsAnyGroupInItsOwnersName() async throws {
        let server = try InProcessServer()
        let owner = try await server.user("owner")
        for uid in ["m1", "m2", "m3", "stranger"] { _ = try await server.user(uid) }
        let created = try await server.request(
            "POST", Endpoints.adminGroups, admin: true,
            json: AdminCreateGroupRequest(
                owner: "owner", group: CreateGroupRequest(guid: "secret", name: "Secret", type: .private)))
        #expect(created.status == 201)
        #expect(try created.decode(GroupPayload.self).owner == "owner")
        let admin = "\(Endpoints.adminGroups)/secret"

        let listed = try await server.request("GET", "\(Endpoints.adminGroups)?searchKeyword=sec", admin: true)
            .decode(Page<GroupPayload>.self)
        #expect(listed.items.map(\.guid) == ["secret"], "private groups too")
        let added = try await server.request(
            "POST", admin + "/members", admin: true,
            json: AddMembersRequest(members: ["m1", "m2", "m3", "ghost"].map { AddMemberRequest(uid: $0) }))
        #expect(try added.decode(AddMembersResponse.self).members.map(\.status) == [.added, .added, .added, .failed])
        #expect(
            try await server.request(
                "PATCH", admin + "/members/m1", admin: true, json: ChangeScopeRequest(scope: .admin)
            ).decode(GroupMemberPayload.self).scope == .admin)
        #expect(try await server.request("DELETE", admin + "/members/m2", admin: true).status == 204)
        #expect(try await server.request("PUT", admin + "/bans/m3", admin: true).status == 200)
        let bans = try await server.request("GET", admin + "/bans", admin: true).decode(Page<GroupBanPayload>.self)
        #expect(bans.items.map(\.user.uid) == ["m3"])
        #expect(try await server.request("DELETE", admin + "/bans/m3", admin: true).status == 204)
        let members = try await server.request("GET", admin + "/members?limit=10", admin: true)
            .decode(Page<GroupMemberPayload>.self)
        #expect(members.items.map { "\($0.user.uid) \($0.scope.rawValue)" } == ["m1 admin", "owner owner"])
        #expect(
            try await server.request(
                "POST", admin + "/owner", admin: true, json: TransferOwnershipRequest(uid: "m1")
            ).status == 200)
        #expect(try await server.request("GET", admin, admin: true).decode(GroupPayload.self).owner == "m1")
        #expect(
            try await server.request("GET", "\(Endpoints.groups)/secret/members", token: owner).status == 200,
            "the old owner is an admin now")
        let theirs = try await server.request("GET", "\(Endpoints.adminUsers)/owner/groups", admin: true)
            .decode(Page<GroupPayload>.self)
        #expect(theirs.items.map { "\($0.guid) \($0.scope?.rawValue ?? "-")" } == ["secret admin"])

        // The group's rules hold for the operator too: the owner cannot be kicked.
        #expect(try await server.request("DELETE", admin + "/members/m1", admin: true).status == 403)
        #expect(try await server.request("DELETE", admin + "/members/m1").status == 401)
        #expect(try await server.request("DELETE", admin, admin: true).status == 204)
        #expect(try await server.request("GET", admin, admin: true).status == 404)
        #expect(
            try await Self.trail(server, 8) == [
                "group.delete secret", "group.owner.transfer secret to m1", "group.unban secret m3",
                "group.ban secret m3", "group.member.kick secret m2", "group.member.scope secret m1",
                "group.member.add secret (4 listed)",
                "group.create secret"
            ])
    }

    @Test func theOperatorReadsAConversationAndDeletesAMessageForEveryone() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let hello = try await server.send("hello", from: alice, to: "bob")
        let spam = try await server.send("buy now", from: bob, to: "alice")
        let conversation = ConversationPayload.directID("alice", "bob")
        let read = try await server.request(
            "GET", "\(Endpoints.adminConversations)/\(conversation)/messages", admin: true)
        #expect(try read.decode([MessagePayload].self).map(\.text) == ["hello", "buy now"])
        #expect(try await Self.trail(server, 1) == ["messages.read \(conversation)"])
        #expect(
            try await server.request("GET", "\(Endpoints.adminConversations)/a~z/messages", admin: true).status == 404)

        let (socket, _) = try server.realtime(alice)
        let deleted = try await server.request("DELETE", "\(Endpoints.adminMessages)/\(spam.id)", admin: true)
        #expect(try deleted.decode(MessagePayload.self).deletedAt != nil)
        var heard: MessagePayload?
        while heard == nil {
            if let message = try socket.nextEnvelope().change?.message, message.id == spam.id { heard = message }
        }
        #expect(heard?.deletedAt != nil && heard?.text == nil, "alice's client hears the deletion live")
        let page = try await server.request("GET", "\(Endpoints.conversations)/\(conversation)/messages", token: alice)
        #expect(try page.decode([MessagePayload].self).map { $0.deletedAt != nil } == [false, true])
        #expect(hello.deletedAt == nil)
        #expect(try await server.request("DELETE", "\(Endpoints.adminMessages)/999999", admin: true).status == 404)
        #expect(try await Self.trail(server, 1) == ["message.delete \(spam.id)"])
    }
}

/// The console's page and the operator's own listener (`--admin-listen`).
@Suite struct ConsoleServingTests {
    @Test func theConsoleIsServedWithAStrictPolicy() async throws {
        let server = try InProcessServer()
        let page = try await server.request("GET", "/admin/")
        #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8")
        let policy = try #require(page.headers["content-security-policy"])
        #expect(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe"))
        #expect(page.headers["x-content-type-options"] == "nosniff")
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains(#"<script type="module" src="/admin/app.js"></script>"#))
        #expect(!html.contains("<script>") && !html.contains("http://") && !html.contains("https://"))
        let script = try await server.request("GET", "/admin/app.js")
        #expect(script.status == 200 && script.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(try await server.request("GET", "/admin/missing.js").status == 404)
        #expect(try await server.request("GET", "/admin/..%2Fconsole.css").status == 404, "no path out of it")
    }

    @Test func theOperatorsListenerKeepsTheOperatorsPathsOffThePublicOne() async throws {
        let server = try InProcessServer(arguments: ["--port", "0", "--admin-listen", "127.0.0.1:0"])
        let port = try server.server.start()
        let operatorPort = server.server.adminPort.load(ordering: .acquiring)
        #expect(operatorPort != 0 && operatorPort != port)
        func status(_ port: UInt16, _ path: String) async throws -> Int {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
            request.setValue(LiveServer.adminKey, forHTTPHeaderField: Endpoints.adminKeyHeader)
            let (_, response) = try await URLSession.shared.data(for: request)
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        }
        for path in ["/admin/", "/admin/app.js", Endpoints.adminUsers, Endpoints.adminAudit, "/metrics"] {
            #expect(try await status(port, path) == 404, "\(path) is not on the public address")
            #expect(try await status(operatorPort, path) == 200, "\(path) is on the operator's")
        }
        #expect(try await status(port, Endpoints.health) == 200)
        var health = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(Endpoints.health)")!)
        health.setValue(LiveServer.adminKey, forHTTPHeaderField: Endpoints.adminKeyHeader)
        let (body, _) = try await URLSession.shared.data(for: health)
        #expect(try JSONDecoder().decode(HealthResponse.self, from: body).engine == nil, "no details on the public one")
        #expect(server.server.consoleURL(port: port) == "http://127.0.0.1:\(operatorPort)/admin/")
    }

    @Test func rateLimitsDoNotLockTheOperatorOut() async throws {
        let server = try InProcessServer(arguments: ["--write-rate", "2"])
        let owner = try await server.user("owner")
        _ = try await server.group("g", by: owner)
        var statuses: [Int] = []
        for _ in 0..<4 {
            statuses.append(
                try await server.request(
                    "POST", Endpoints.messages, token: owner,
                    json: SendMessageRequest(muid: UUID().uuidString, receiver: "owner", text: "hi")
                ).status)
        }
        #expect(statuses.contains(429), "the user's writes are limited: \(statuses)")
        for n in 0..<30 {
            #expect(
                try await server.request("POST", Endpoints.adminUsers, admin: true, json: ["uid": "u\(n)"]).status
                    == 201)
            #expect(
                try await server.request(
                    "POST", "\(Endpoints.adminGroups)/g/members", admin: true, json: AddMemberRequest(uid: "u\(n)")
                ).status == 201)
        }
    }
}
