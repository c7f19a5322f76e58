import Foundation
import OfflineChatProtocol
import OfflineChatSQLite
import OfflineChatServerProcess
import OfflineChatWebSocket
import Testing

@testable import ChatServer

/// The status tables run on chatd's router in the test process (`InProcessServer`); restarts,
/// expiry on the server's clock and the offline admin commands need the real process.
@Suite struct AdminAndAuthTests {
    @Test func healthAnswersWithTheVersion() async throws {
        let server = try InProcessServer()
        let reply = try await server.request("GET", Endpoints.health, admin: true)
        #expect(reply.status == 200)
        let health = try reply.decode(HealthResponse.self)
        #expect(health.version == Endpoints.version && health.database == "ok")
        #expect(health.engine == (LiveServer.onSQLite ? "sqlite" : "postgresql"))
        // Outsiders (a load balancer) learn whether chatd serves, nothing about what it runs.
        let outsider = try await server.request("GET", Endpoints.health)
        #expect(outsider.status == 200 && String(decoding: outsider.body, as: UTF8.self) == #"{"status":"ok"}"#)
    }

    @Test func adminEndpointsRequireTheAdminKey() async throws {
        let server = try InProcessServer()
        let anonymous = try await server.request("POST", Endpoints.adminUsers, json: CreateUserRequest(uid: "alice"))
        #expect(anonymous.status == 401)
        #expect(anonymous.error?.code == .unauthorized)
        let wrong = try await server.request(
            "POST", Endpoints.adminUsers, body: Data(#"{"uid":"a"}"#.utf8),
            headers: [Endpoints.adminKeyHeader: "nope"])
        #expect(wrong.status == 401)
    }

    @Test func creatingAUserTwiceConflicts() async throws {
        let server = try InProcessServer()
        let first = try await server.request(
            "POST", Endpoints.adminUsers, admin: true,
            json: CreateUserRequest(uid: "alice", name: "Alice", tags: ["vip"], role: "admin"))
        #expect(first.status == 201)
        let user = try first.decode(UserPayload.self)
        #expect(user.name == "Alice" && user.tags == ["vip"] && user.role == "admin")
        let second = try await server.request(
            "POST", Endpoints.adminUsers, admin: true, json: CreateUserRequest(uid: "alice"))
        #expect(second.status == 409)
        #expect(second.error?.code == .conflict)
    }

    @Test func invalidUidsAreRejected() async throws {
        let server = try InProcessServer()
        for uid in ["", "has space", "slash/", String(repeating: "x", count: 101)] {
            let reply = try await server.request(
                "POST", Endpoints.adminUsers, admin: true, json: CreateUserRequest(uid: uid))
            #expect(reply.status == 422, "uid \(uid)")
        }
    }

    @Test func aTokenForAnUnknownUserIs404() async throws {
        let server = try InProcessServer()
        let reply = try await server.request(
            "POST", "\(Endpoints.adminUsers)/ghost/tokens", admin: true, json: CreateTokenRequest())
        #expect(reply.status == 404)
    }

    @Test func usersReadThemselvesWithTheirToken() async throws {
        let server = try InProcessServer()
        let token = try await server.user("alice", name: "Alice")
        let me = try await server.request("GET", Endpoints.me, token: token)
        #expect(me.status == 200)
        let user = try me.decode(UserPayload.self)
        #expect(user.uid == "alice")
        #expect(user.lastActiveAt != nil)
    }

    @Test func missingOrUnknownTokensAre401() async throws {
        let server = try InProcessServer()
        _ = try await server.user("alice")
        let none = try await server.request("GET", Endpoints.me)
        #expect(none.status == 401 && none.error?.code == .unauthorized)
        let bogus = try await server.request("GET", Endpoints.me, token: "not-a-token")
        #expect(bogus.status == 401 && bogus.error?.code == .unauthorized)
        let basic = try await server.request("GET", Endpoints.me, headers: ["Authorization": "Basic Zm9vOmJhcg=="])
        #expect(basic.status == 401)
    }

    /// The admin revokes by the token or its hash, in the body (never in a logged path); a
    /// user revokes the token they call with.
    @Test func aRevokedTokenIs401Revoked() async throws {
        let server = try InProcessServer()
        let token = try await server.user("alice")
        let other = try await server.request(
            "POST", "\(Endpoints.adminUsers)/alice/tokens", admin: true, json: CreateTokenRequest()
        )
        .decode(TokenResponse.self)
        let third = try await server.token("alice")
        let revoke = "\(Endpoints.adminTokens)/revoke"
        #expect(
            try await server.request("POST", revoke, admin: true, json: RevokeTokenRequest(token: token)).status == 204)
        let reply = try await server.request("GET", Endpoints.me, token: token)
        #expect(reply.status == 401 && reply.error?.code == .tokenRevoked)
        #expect(try await server.request("GET", Endpoints.me, token: other.authToken).status == 200)
        #expect(
            try await server.request("POST", revoke, admin: true, json: RevokeTokenRequest(tokenHash: other.tokenHash))
                .status == 204)
        #expect(try await server.request("GET", Endpoints.me, token: other.authToken).status == 401)
        #expect(
            try await server.request("POST", revoke, admin: true, json: RevokeTokenRequest(token: "unknown")).status
                == 404)
        #expect(try await server.request("POST", revoke, admin: true, json: RevokeTokenRequest()).status == 422)
        #expect(
            try await server.request("POST", revoke, json: RevokeTokenRequest(token: third)).status == 401, "admin only"
        )
        // The user's own revocation.
        #expect(try await server.request("DELETE", Endpoints.meToken, token: third).status == 204)
        #expect(try await server.request("GET", Endpoints.me, token: third).error?.code == .tokenRevoked)
        #expect(try await server.request("DELETE", Endpoints.meToken, token: third).status == 401)
    }

    /// The database keeps no bearer token (only their SHA-256), and a deployment from before
    /// the hashing keeps its sessions: the migration hashes the tokens it finds.
    @Test(.enabled(if: LiveServer.onSQLite)) func theDatabaseHoldsNoTokenAndOldTokensKeepWorking() async throws {
        let server = try LiveServer()
        let token = try await server.user("alice")
        #expect(try await server.request("GET", Endpoints.me, token: token).status == 200)
        server.stop()
        let database = server.dataDirectory.appendingPathComponent("chatd.sqlite")
        var files = Data()
        for suffix in ["", "-wal"] {
            files += (try? Data(contentsOf: URL(fileURLWithPath: database.path + suffix))) ?? Data()
        }
        #expect(files.range(of: Data(token.utf8)) == nil, "the token is nowhere in the files")
        // Put the token back as an old chatd stored it; the migration must hash it again.
        let db = try Connection(path: database.path)
        try db.run("UPDATE tokens SET token = ?", [token])
        try OldSchema.rewind(db, to: 9)
        try db.close()
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        #expect(try await restarted.request("GET", Endpoints.me, token: token).status == 200)
    }

    @Test func aTokenExpiresAfterItsLifetime() async throws {
        let server = try LiveServer()
        _ = try await server.user("alice")
        let token = try await server.token("alice", ttlSeconds: 60)
        #expect(try await server.request("GET", Endpoints.me, token: token).status == 200)
        try await server.advanceClock(seconds: 61)
        let reply = try await server.request("GET", Endpoints.me, token: token)
        #expect(reply.status == 401 && reply.error?.code == .tokenExpired)
    }

    @Test func offlineAdminCommandsWorkOnTheDataDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chatd-admin-\(UUID().uuidString)")
        func chatd(_ arguments: [String]) throws -> (Int32, String) {
            try LiveServer.run(arguments + (try LiveServer.storeArguments(directory)))
        }
        #expect(try chatd(["user", "add", "carol", "--name", "Carol"]).0 == 0)
        let (status, token) = try chatd(["token", "carol"])
        #expect(status == 0)
        let (failed, message) = try chatd(["token", "nobody"])
        #expect(failed != 0 && message.contains("no user nobody"))
        let (usage, text) = try chatd(["--port", "x"])
        #expect(usage == 2 && text.contains("--port must be a number"))

        #expect(try chatd(["user", "add", "dave"]).0 == 0)
        let (created, groupText) = try chatd([
            "group", "add", "team", "--name", "Team", "--owner", "carol", "--type", "private"
        ])
        #expect(created == 0 && groupText.contains("created group team (Team), owner carol"), "\(groupText)")
        let (added, memberText) = try chatd(["group", "member", "add", "team", "dave", "--scope", "moderator"])
        #expect(added == 0 && memberText == "added dave to team as moderator", "\(memberText)")
        #expect(try chatd(["group", "member", "add", "team", "dave"]).1 == "dave is already in team")
        #expect(try chatd(["group", "member", "add", "nowhere", "dave"]).0 != 0)

        // An import: 2,500 users (three calls of at most 1,000), one with a scope of its own,
        // dave again (already a member), a comment and a blank line.
        do {
            let (_, configuration) = try ChatdArguments.parse(try LiveServer.storeArguments(directory))
            let store = try Store.open(configuration, clock: SystemClock(), connections: 1)
            defer { try? store.close() }
            for index in 0..<2_500 { _ = try store.createUser(CreateUserRequest(uid: "i\(index)")) }
        }
        let list = directory.appendingPathComponent("members.txt")
        try (["# the team", "", "dave", "i0,admin"] + (1..<2_500).map { "i\($0)" }).joined(separator: "\n")
            .write(to: list, atomically: true, encoding: .utf8)
        let (imported, importText) = try chatd(["group", "member", "import", "team", list.path])
        #expect(imported == 0 && importText == "added 2500 to team (1 already members)", "\(importText)")
        // A bad line: nothing is added, the line is named.
        try "ghost\nbad uid!\nother,owner\n".write(to: list, atomically: true, encoding: .utf8)
        let (refused, refusal) = try chatd(["group", "member", "import", "team", list.path])
        #expect(refused != 0 && refusal.contains("nothing added") && refusal.contains("line 2"), "\(refusal)")
        #expect(refusal.contains("line 3"), "an owner is never imported: \(refusal)")
        // Unknown users are listed; the others are added.
        try "ghost\ni0\n".write(to: list, atomically: true, encoding: .utf8)
        let (partial, partialText) = try chatd(["group", "member", "import", "team", list.path])
        #expect(partial != 0 && partialText.contains("added 0 to team (1 already members); 1 not added"))
        #expect(partialText.contains("ghost (not_found"), "\(partialText)")
        #expect(try chatd(["group", "add", "x"]).1.contains("--owner"))
        #expect(
            try chatd(["group", "add", "x", "--owner", "carol", "--type", "password"]).1.contains("public or private"))

        let server = try LiveServer(dataDirectory: directory)
        let me = try await server.request("GET", Endpoints.me, token: token)
        #expect(try me.decode(UserPayload.self).name == "Carol")
        let group = try await server.request("GET", "\(Endpoints.groups)/team", token: token).decode(GroupPayload.self)
        #expect(group.type == .private && group.membersCount == 2_502)
        let admins = try await server.request("GET", "\(Endpoints.groups)/team/members?limit=100", token: token)
            .decode(Page<GroupMemberPayload>.self).items.filter { $0.scope == .admin }.map(\.user.uid)
        #expect(admins == ["i0"])
        let trail = try await server.request("GET", Endpoints.adminAudit + "?limit=100", admin: true)
            .decode(Page<AuditEntry>.self).items.reversed().map { "\($0.action) \($0.target)" }
        #expect(
            trail == [
                "user.create carol", "token.issue carol", "user.create dave", "group.create team",
                "group.member.add team: dave", "group.member.import team: 2500 added"
            ], "the commands that changed something, in order")
    }

    @Test func aGeneratedAdminKeyIsStoredPrivately() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatd-key-\(UUID().uuidString)")
        // No admin key given: chatd makes one, stores it and prints it as it starts.
        let (process, _, seen) = try ServerProcess.start(
            LiveServer.binary, ["--data", directory.path, "--port", "0"], readyWhen: "listening on")
        let status = ServerProcess.end(process)
        let file = directory.appendingPathComponent("admin.key")
        let key = try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(seen.contains(key))
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(status == 0)
    }
}

extension AdminAndAuthTests {
    /// Every admin action that changed something is in the audit trail, newest first, paged; a
    /// refused one (no key, a conflict) is not, and no secret is: a revoked token appears as
    /// its hash.
    @Test func adminActionsAreAudited() async throws {
        let server = try InProcessServer()
        let token = try await server.user("alice")  // user.create, token.issue
        #expect(try await server.request("POST", Endpoints.adminUsers, json: CreateUserRequest(uid: "x")).status == 401)
        #expect(
            try await server.request("POST", Endpoints.adminUsers, admin: true, json: CreateUserRequest(uid: "alice"))
                .status == 409)
        #expect(
            try await server.request(
                "POST", Endpoints.adminTokens + "/revoke", admin: true, json: RevokeTokenRequest(token: token)
            ).status == 204)
        try await server.advanceClock(seconds: 5)
        func trail(_ query: String = "") async throws -> Page<AuditEntry> {
            try await server.request("GET", Endpoints.adminAudit + query, admin: true).decode(Page<AuditEntry>.self)
        }
        let all = try await trail()
        #expect(all.items.map(\.action) == ["clock.advance", "token.revoke", "token.issue", "user.create"])
        #expect(all.items.map(\.target) == ["5 s", Store.tokenHash(token), "alice", "alice"])
        #expect(all.items.map(\.id) == all.items.map(\.id).sorted(by: >) && all.next == nil)
        #expect(!all.items.contains { $0.target.contains(token) }, "the token itself is never kept")
        let first = try await trail("?limit=3")
        let rest = try await trail("?limit=3&cursor=\(try #require(first.next))")
        #expect(first.items + rest.items == all.items && rest.next == nil)
        #expect(try await server.request("GET", Endpoints.adminAudit).status == 401)
        #expect(try await server.request("GET", Endpoints.adminAudit + "?cursor=x", admin: true).status == 400)
    }
}

extension AdminAndAuthTests {
    /// Suspending a user revokes every token of theirs (their socket closes, their requests
    /// answer 401 `token_revoked`) and refuses new ones (403) until the suspension is lifted;
    /// a repeat changes nothing; both moves are audited.
    @Test func aSuspendedUserCannotSignIn() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let laptop = try await server.token("alice")
        let bob = try await server.user("bob")
        let (socket, _) = try server.realtime(alice)
        let suspension = "\(Endpoints.adminUsers)/alice/suspension"
        let reply = try await server.request("PUT", suspension, admin: true)
        #expect(reply.status == 200)
        let first = try reply.decode(SuspensionResponse.self)
        #expect(first.uid == "alice" && first.revokedTokens == 2)
        var closed: Message?
        while closed == nil {
            if case .close(let code, let reason) = try socket.receive() { closed = .close(code, reason) }
        }
        #expect(closed == .close(.policyViolation, "token revoked"), "her socket closes")
        for token in [alice, laptop] {
            #expect(try await server.request("GET", Endpoints.me, token: token).error?.code == .tokenRevoked)
        }
        #expect(try await server.request("GET", Endpoints.me, token: bob).status == 200, "others are not touched")
        let refused = try await server.request("POST", "\(Endpoints.adminUsers)/alice/tokens", admin: true)
        #expect(refused.status == 403 && refused.error?.code == .forbidden)
        let again = try await server.request("PUT", suspension, admin: true).decode(SuspensionResponse.self)
        #expect(again.revokedTokens == 0 && again.suspendedAt == first.suspendedAt)
        #expect(try await server.request("PUT", "\(Endpoints.adminUsers)/ghost/suspension", admin: true).status == 404)
        #expect(try await server.request("DELETE", suspension).status == 401)

        #expect(try await server.request("DELETE", suspension, admin: true).status == 204)
        let back = try await server.token("alice")
        #expect(try await server.request("GET", Endpoints.me, token: back).status == 200)
        #expect(try await server.request("GET", Endpoints.me, token: alice).status == 401, "old tokens stay revoked")
        let trail = try await server.request("GET", Endpoints.adminAudit, admin: true).decode(Page<AuditEntry>.self)
        #expect(
            trail.items.prefix(4).map { "\($0.action) \($0.target)" }
                == ["token.issue alice", "user.unsuspend alice", "user.suspend alice", "user.suspend alice"])
    }
}
