import Foundation
import OfflineChatProtocol
import Testing

/// Every group action, by every scope, on every scope, against a table written out here
/// (not derived from chatd's own rules). Against chatd's router in the test process
/// (`InProcessServer`): these are status tables, no sockets involved.
@Suite struct GroupPermissionTests {
    /// owner > admin > moderator > participant.
    static let rank: [GroupScope: Int] = [.participant: 0, .moderator: 1, .admin: 2, .owner: 3]
    static let actors: [GroupScope] = [.owner, .admin, .moderator, .participant]
    static let targets: [GroupScope] = [.admin, .moderator, .participant]

    /// A group with one member per scope: o (owner), a, m, p.
    struct Fixture {
        let server: InProcessServer
        var tokens: [GroupScope: String] = [:]
        var next = 0

        init() async throws {
            server = try InProcessServer()
            tokens[.owner] = try await server.user("o")
            try await server.group("g", by: tokens[.owner]!)
            for (uid, scope) in [("a", GroupScope.admin), ("m", .moderator), ("p", .participant)] {
                tokens[scope] = try await server.user(uid)
                #expect(try await server.addMember(uid, to: "g", scope: scope, by: tokens[.owner]!) == 201)
            }
        }

        /// A fresh member with `scope` (added by the owner), so each case starts clean.
        mutating func member(_ scope: GroupScope?) async throws -> String {
            next += 1
            let uid = "t\(next)"
            _ = try await server.user(uid)
            if let scope { #expect(try await server.addMember(uid, to: "g", scope: scope, by: tokens[.owner]!) == 201) }
            return uid
        }
    }

    @Test func kickAndBanNeedModeratorAndAHigherScope() async throws {
        var fixture = try await Fixture()
        for actor in Self.actors {
            for target in Self.targets {
                let allowed = Self.rank[actor]! >= 1 && Self.rank[actor]! > Self.rank[target]!
                let kicked = try await fixture.member(target)
                let kick = try await fixture.server.request(
                    "DELETE", "\(Endpoints.groups)/g/members/\(kicked)", token: fixture.tokens[actor]!)
                #expect(kick.status == (allowed ? 204 : 403), "\(actor) kicks \(target)")
                let banned = try await fixture.member(target)
                let ban = try await fixture.server.request(
                    "PUT", "\(Endpoints.groups)/g/bans/\(banned)", token: fixture.tokens[actor]!)
                #expect(ban.status == (allowed ? 200 : 403), "\(actor) bans \(target)")
            }
        }
        // Nobody kicks or bans the owner, not even themselves.
        for actor in Self.actors {
            #expect(
                try await fixture.server.request(
                    "DELETE", "\(Endpoints.groups)/g/members/o", token: fixture.tokens[actor]!
                ).status == 403)
            #expect(
                try await fixture.server.request("PUT", "\(Endpoints.groups)/g/bans/o", token: fixture.tokens[actor]!)
                    .status == 403)
        }
    }

    @Test func unbanAndTheBannedListNeedModerator() async throws {
        var fixture = try await Fixture()
        for actor in Self.actors {
            let uid = try await fixture.member(nil)
            #expect(
                try await fixture.server.request(
                    "PUT", "\(Endpoints.groups)/g/bans/\(uid)", token: fixture.tokens[.owner]!
                ).status == 200)
            let allowed = actor != .participant
            let list = try await fixture.server.request(
                "GET", "\(Endpoints.groups)/g/bans", token: fixture.tokens[actor]!)
            #expect(list.status == (allowed ? 200 : 403), "\(actor) lists bans")
            let unban = try await fixture.server.request(
                "DELETE", "\(Endpoints.groups)/g/bans/\(uid)", token: fixture.tokens[actor]!)
            #expect(unban.status == (allowed ? 204 : 403), "\(actor) unbans")
        }
    }

    @Test func scopeChangesNeedAdminAHigherScopeAndNoPromotionAboveOneself() async throws {
        var fixture = try await Fixture()
        for actor in Self.actors {
            for target in Self.targets {
                for scope in [GroupScope.admin, .moderator, .participant] {
                    let uid = try await fixture.member(target)
                    let reply = try await fixture.server.request(
                        "PATCH", "\(Endpoints.groups)/g/members/\(uid)", token: fixture.tokens[actor]!,
                        json: ChangeScopeRequest(scope: scope))
                    let allowed =
                        Self.rank[actor]! >= 2 && Self.rank[actor]! > Self.rank[target]!
                        && Self.rank[scope]! <= Self.rank[actor]!
                    #expect(reply.status == (allowed ? 200 : 403), "\(actor) changes a \(target) to \(scope)")
                    if allowed { #expect(try reply.decode(GroupMemberPayload.self).scope == scope) }
                }
            }
            let owner = try await fixture.server.request(
                "PATCH", "\(Endpoints.groups)/g/members/t1", token: fixture.tokens[actor]!,
                json: ChangeScopeRequest(scope: .owner))
            #expect(owner.status == (Self.rank[actor]! >= 2 ? 422 : 403), "ownership moves only by transfer (\(actor))")
        }
    }

    @Test func addingNeedsAdminAndAScopeNoHigherThanOnesOwn() async throws {
        var fixture = try await Fixture()
        for actor in Self.actors {
            for scope in [GroupScope.admin, .moderator, .participant] {
                let uid = try await fixture.member(nil)
                let allowed = Self.rank[actor]! >= 2 && Self.rank[scope]! <= Self.rank[actor]!
                let status = try await fixture.server.addMember(uid, to: "g", scope: scope, by: fixture.tokens[actor]!)
                #expect(status == (allowed ? 201 : 403), "\(actor) adds a \(scope)")
            }
        }
    }

    @Test func editingNeedsAdminDeletingAndTransferNeedTheOwner() async throws {
        let fixture = try await Fixture()
        for actor in Self.actors {
            let edit = try await fixture.server.request(
                "PATCH", "\(Endpoints.groups)/g", token: fixture.tokens[actor]!,
                json: EditGroupRequest(name: "by \(actor)"))
            #expect(edit.status == (Self.rank[actor]! >= 2 ? 200 : 403), "\(actor) edits")
        }
        for actor in Self.actors where actor != .owner {
            #expect(
                try await fixture.server.request("DELETE", "\(Endpoints.groups)/g", token: fixture.tokens[actor]!)
                    .status == 403)
            #expect(
                try await fixture.server.request(
                    "POST", "\(Endpoints.groups)/g/owner", token: fixture.tokens[actor]!,
                    json: TransferOwnershipRequest(uid: "p")
                ).status == 403)
            #expect(
                try await fixture.server.request("POST", "\(Endpoints.groups)/g/leave", token: fixture.tokens[actor]!)
                    .status == 204)
        }
        #expect(
            try await fixture.server.request("POST", "\(Endpoints.groups)/g/leave", token: fixture.tokens[.owner]!)
                .status == 409,
            "the owner transfers before leaving")
        #expect(
            try await fixture.server.request("DELETE", "\(Endpoints.groups)/g", token: fixture.tokens[.owner]!).status
                == 204)
    }

    @Test func deletingOthersMessagesNeedsModerator() async throws {
        let fixture = try await Fixture()
        for actor in Self.actors {
            for author in Self.actors where author != actor {
                let message = try await fixture.server.sendToGroup(
                    "by \(author)", from: fixture.tokens[author]!, to: "g"
                ).decode(MessagePayload.self)
                let reply = try await fixture.server.request(
                    "DELETE", "\(Endpoints.messages)/\(message.id)", token: fixture.tokens[actor]!)
                #expect(reply.status == (Self.rank[actor]! >= 1 ? 200 : 403), "\(actor) deletes a message by \(author)")
            }
        }
    }

    @Test func nonMembersMayDoNothingButJoin() async throws {
        let fixture = try await Fixture()
        let stranger = try await fixture.server.user("stranger")
        let requests: [(String, String, Data?)] = [
            ("GET", "/g/members", nil), ("GET", "/g/bans", nil),
            ("POST", "/g/members", try JSONEncoder().encode(AddMemberRequest(uid: "stranger"))),
            ("DELETE", "/g/members/p", nil), ("PUT", "/g/bans/p", nil),
            ("PATCH", "/g", try JSONEncoder().encode(EditGroupRequest(name: "x"))),
            ("DELETE", "/g", nil), ("POST", "/g/leave", nil)
        ]
        for (method, path, body) in requests {
            let reply = try await fixture.server.request(method, Endpoints.groups + path, token: stranger, body: body)
            #expect(reply.status == 403, "\(method) \(path) by a non-member")
        }
        #expect(try await fixture.server.sendToGroup("hi", from: stranger, to: "g").status == 403)
    }
}
