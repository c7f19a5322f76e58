import ChatTesting
import Foundation
import OfflineChatCache
import OfflineChatLocking
import Testing

@testable import OfflineChat

/// Users, groups, members, banned members, reactions, the feed, blocked users and threads:
/// per-request snapshots (or the SDK's own list), against a live chatd.
@Suite(.timeLimit(.minutes(1))) struct EntityListTests {
    /// Collects phases as strings of ids, in order.
    final class Log<Item: Sendable>: @unchecked Sendable {
        let phases = PhaseLog()
        let key: @Sendable (Item) -> String
        let names = Locked<[String: [String]]>([:])
        init(_ key: @escaping @Sendable (Item) -> String) { self.key = key }
        var cached: @Sendable ([Item]) -> Void { { [self] items in phases.push(.cached([Int64(remember(items))])) } }
        var server: @Sendable ([Item]) -> Void { { [self] items in phases.push(.server([Int64(remember(items))])) } }
        var error: @Sendable (ChatException) -> Void { { [phases] in phases.push(.error($0.errorCode)) } }
        private var counter = Locked(0)
        /// Stores the names under a fresh number and returns it, so phases compare by content.
        private func remember(_ items: [Item]) -> Int {
            let number = counter.withLock { value in
                defer { value += 1 }
                return value
            }
            names.withLock { $0["\(number)"] = items.map(key) }
            return number
        }
        /// The next phase as "cached: a,b" / "server: a,b" / "error: CODE".
        func next() async -> String {
            switch await phases.next() {
            case .cached(let number): "cached: " + (names.current["\(number[0])"] ?? []).joined(separator: ",")
            case .server(let number): "server: " + (names.current["\(number[0])"] ?? []).joined(separator: ",")
            case .error(let code): "error: " + code
            }
        }
    }

    struct World {
        let server: LiveChatd
        let alice: ChatClient
        let tokens: [String: String]
    }

    /// alice (logged in, offline support on), bob, carol, dave; group "g" owned by alice with
    /// bob and carol; dave banned; bob's message to alice with two reactions; a mention of alice.
    func world() async throws -> World {
        let server = try LiveChatd()
        var tokens: [String: String] = [:]
        for uid in ["alice", "bob", "carol", "dave"] { tokens[uid] = try await server.user(uid) }
        _ = try await server.request(
            "POST", Endpoints.groups, token: tokens["alice"],
            json: CreateGroupRequest(guid: "g", name: "G", tags: ["t"]))
        _ = try await server.request(
            "POST", Endpoints.groups, token: tokens["bob"], json: CreateGroupRequest(guid: "h", name: "H"))
        for uid in ["bob", "carol"] {
            _ = try await server.request(
                "POST", "\(Endpoints.groups)/g/members", token: tokens["alice"], json: AddMemberRequest(uid: uid))
        }
        _ = try await server.request("PUT", "\(Endpoints.groups)/g/bans/dave", token: tokens["alice"])
        let message = try await server.send("hey <@uid:alice>", from: tokens["bob"]!, to: "alice")
        for uid in ["bob", "alice"] {
            _ = try await server.request(
                "POST", "\(Endpoints.messages)/\(message)/reactions", token: tokens[uid],
                json: AddReactionRequest(reaction: "👍"))
        }
        let alice = try makeClient(server, offline: offlineOn())
        try await alice.login(uid: "alice", authToken: tokens["alice"]!)
        return World(server: server, alice: alice, tokens: tokens)
    }

    @Test func aListReplaysWhatTheServerReturnedForTheSameSettings() async throws {
        let world = try await world()
        let log = Log<User> { $0.uid }
        let paged = UsersRequest.UsersRequestBuilder().set(limit: 2).build(client: world.alice)
        paged.fetchNext(onCachedUsers: log.cached, onServerUsers: log.server, onError: log.error)
        #expect(await log.next() == "cached: ")
        #expect(await log.next() == "server: alice,bob")
        paged.fetchNext(onCachedUsers: log.cached, onServerUsers: log.server, onError: log.error)
        #expect(await log.next() == "cached: ")
        #expect(await log.next() == "server: carol,dave")
        let again = UsersRequest.UsersRequestBuilder().set(limit: 2).build(client: world.alice)
        again.fetchNext(onCachedUsers: log.cached, onServerUsers: log.server, onError: log.error)
        #expect(await log.next() == "cached: alice,bob")
        _ = await log.next()
        again.fetchNext(onCachedUsers: log.cached, onServerUsers: log.server, onError: log.error)
        #expect(await log.next() == "cached: carol,dave")
        _ = await log.next()
        // Other settings are another snapshot; a keyword is never snapshotted.
        UsersRequest.UsersRequestBuilder().set(limit: 3).build(client: world.alice)
            .fetchNext(onCachedUsers: log.cached, onServerUsers: log.server, onError: log.error)
        #expect(await log.next() == "cached: ")
        _ = await log.next()
        for _ in 0..<2 {
            UsersRequest.UsersRequestBuilder().set(searchKeyword: "ar").build(client: world.alice)
                .fetchNext(onCachedUsers: log.cached, onServerUsers: log.server, onError: log.error)
            #expect(await log.next() == "cached: ")
            #expect(await log.next() == "server: carol")
        }
        // Offline: the snapshot, then the error.
        world.server.stop()
        UsersRequest.UsersRequestBuilder().set(limit: 2).build(client: world.alice)
            .fetchNext(onCachedUsers: log.cached, onServerUsers: log.server, onError: log.error)
        #expect(await log.next() == "cached: alice,bob")
        #expect(await log.next() == "error: \(ChatException.internetUnavailable)")
    }

    @Test func groupsMembersAndBansHaveTheirSnapshots() async throws {
        let world = try await world()
        let groups = Log<Group> { $0.guid }
        for expected in ["cached: ", "cached: g,h"] {
            GroupsRequest.GroupsRequestBuilder().build(client: world.alice).fetchNext(
                onCachedGroups: groups.cached, onServerGroups: groups.server, onError: groups.error)
            #expect(await groups.next() == expected)
            #expect(await groups.next() == "server: g,h")
        }
        GroupsRequest.GroupsRequestBuilder().joinedOnly(true).build(client: world.alice)
            .fetchNext(onCachedGroups: groups.cached, onServerGroups: groups.server, onError: groups.error)
        #expect(await groups.next() == "cached: ")
        #expect(await groups.next() == "server: g")

        let members = Log<GroupMember> { "\($0.uid)/\($0.scope.rawValue)" }
        for expected in ["cached: ", "cached: alice/owner,bob/participant,carol/participant"] {
            GroupMembersRequest.GroupMembersRequestBuilder(guid: "g").build(client: world.alice)
                .fetchNext(
                    onCachedGroupMembers: members.cached, onServerGroupMembers: members.server, onError: members.error)
            #expect(await members.next() == expected)
            #expect(await members.next() == "server: alice/owner,bob/participant,carol/participant")
        }
        GroupMembersRequest.GroupMembersRequestBuilder(guid: "g").set(status: .online).build(client: world.alice)
            .fetchNext(
                onCachedGroupMembers: members.cached, onServerGroupMembers: members.server, onError: members.error)
        #expect(await members.next() == "cached: ", "presence is never snapshotted")
        #expect(await members.next() == "server: alice/owner")

        let bans = Log<BannedGroupMember> { $0.uid }
        for expected in ["cached: ", "cached: dave"] {
            BannedGroupMembersRequest.BannedGroupMembersRequestBuilder(guid: "g").build(client: world.alice)
                .fetchNext(
                    onCachedBannedGroupMembers: bans.cached, onServerBannedGroupMembers: bans.server,
                    onError: bans.error)
            #expect(await bans.next() == expected)
            #expect(await bans.next() == "server: dave")
        }
        // A server error reaches onError unchanged (bob may not list bans of h's… he owns h; carol may not list g's).
        let carol = try makeClient(world.server, offline: offlineOn())
        try await carol.login(uid: "carol", authToken: world.tokens["carol"]!)
        BannedGroupMembersRequest.BannedGroupMembersRequestBuilder(guid: "g").build(client: carol)
            .fetchNext(
                onCachedBannedGroupMembers: bans.cached, onServerBannedGroupMembers: bans.server, onError: bans.error)
        #expect(await bans.next() == "cached: ")
        #expect(await bans.next() == "error: forbidden")
    }

    @Test func reactionsKeepOnePerDirectionAndTheFeedItsPages() async throws {
        let world = try await world()
        let messageId = try #require(
            try await world.alice.session.current?.api.get(Endpoints.notifications) as [FeedItemPayload]?
        ).first!.messageId
        let reactions = Log<Reaction> { "\($0.uid)\($0.reaction)" }
        let request = try ReactionsRequest.ReactionsRequestBuilder().set(messageId: messageId).set(limit: 1).build(
            client: world.alice)
        request.fetchNext(
            onCachedReactions: reactions.cached, onServerReactions: reactions.server, onError: reactions.error)
        #expect(await reactions.next() == "cached: ")
        #expect(await reactions.next() == "server: bob👍")
        request.fetchPrevious(
            onCachedReactions: reactions.cached, onServerReactions: reactions.server, onError: reactions.error)
        #expect(await reactions.next() == "cached: ", "the other direction has its own pages")
        #expect(await reactions.next() == "server: alice👍")
        let again = try ReactionsRequest.ReactionsRequestBuilder().set(messageId: messageId).set(limit: 1).build(
            client: world.alice)
        again.fetchPrevious(
            onCachedReactions: reactions.cached, onServerReactions: reactions.server, onError: reactions.error)
        #expect(await reactions.next() == "cached: alice👍")
        _ = await reactions.next()
        again.fetchNext(
            onCachedReactions: reactions.cached, onServerReactions: reactions.server, onError: reactions.error)
        #expect(await reactions.next() == "cached: bob👍")
        _ = await reactions.next()

        let feed = Log<NotificationFeedItem> { "\($0.kind.rawValue):\($0.actor)" }
        for expected in ["cached: ", "cached: mention:bob"] {
            NotificationFeedRequest.NotificationFeedRequestBuilder().build(client: world.alice)
                .fetchNext(
                    onCachedNotificationFeedItems: feed.cached, onServerNotificationFeedItems: feed.server,
                    onError: feed.error)
            #expect(await feed.next() == expected)
            #expect(await feed.next() == "server: mention:bob", "alice's own reaction is not in her feed")
        }
    }

    @Test func theBlockedListIsTheSDKsOwn() async throws {
        let world = try await world()
        let outcome = try await world.alice.blockUsers(["carol", "ghost"])
        #expect(outcome["carol"] == "success" && outcome["ghost"] == "not_found")
        let blocked = Log<User> { $0.uid }
        let request = BlockedUserRequest.BlockedUserRequestBuilder(limit: 1).build(client: world.alice)
        request.fetchNext(onCachedUsers: blocked.cached, onServerUsers: blocked.server, onError: blocked.error)
        #expect(await blocked.next() == "cached: carol", "known before any list was fetched")
        #expect(await blocked.next() == "server: carol")
        _ = try await world.alice.blockUsers(["bob"])
        request.fetchNext(onCachedUsers: blocked.cached, onServerUsers: blocked.server, onError: blocked.error)
        #expect(await blocked.next() == "cached: ", "later pages of the cached list are empty")
        #expect(await blocked.next() == "server: ", "the server's list had ended")
        BlockedUserRequest.BlockedUserRequestBuilder().build(client: world.alice)
            .fetchNext(onCachedUsers: blocked.cached, onServerUsers: blocked.server, onError: blocked.error)
        #expect(await blocked.next() == "cached: bob,carol")
        #expect(await blocked.next() == "server: bob,carol")
        _ = try await world.alice.unblockUsers(["carol"])
        world.server.stop()
        BlockedUserRequest.BlockedUserRequestBuilder().build(client: world.alice)
            .fetchNext(onCachedUsers: blocked.cached, onServerUsers: blocked.server, onError: blocked.error)
        #expect(await blocked.next() == "cached: bob")
        #expect(await blocked.next() == "error: \(ChatException.internetUnavailable)")
        await #expect(throws: ChatException.self) { try await world.alice.blockUsers(["carol"]) }
    }

    @Test func threadsComeFromTheirOwnCachedStretch() async throws {
        let world = try await world()
        let parent = try await world.server.send("parent", from: world.tokens["bob"]!, to: "alice")
        var replies: [Int64] = []
        for index in 0..<2 {
            let (status, data) = try await world.server.request(
                "POST", Endpoints.messages, token: world.tokens["bob"],
                json: SendMessageRequest(
                    muid: "r\(index)", receiver: "alice", text: "reply \(index)", parentMessageId: parent))
            #expect(status == 201)
            replies.append(try JSONDecoder().decode(MessagePayload.self, from: data).id)
        }
        let log = PhaseLog()
        for expected in [[], replies] {
            try ThreadsRequest.ThreadsRequestBuilder(parentMessageId: parent).build(client: world.alice)
                .fetchNext(onCachedThreads: log.cached, onServerThreads: log.server, onError: log.error)
            #expect(await log.next() == .cached(expected))
            #expect(await log.next() == .server(replies))
        }
    }

    @Test func aSecondFetchInFlightGetsAnEmptyListOrAnErrorPerTheSeed() async throws {
        let world = try await world()
        // The same user's next launch against a server that never answers: every fetch stays
        // in flight until the request timeout.
        let silent = try SilentServer()
        var config = world.alice.config
        config.server = silent.url
        config.requestTimeout = 1
        let stuck = try ChatClient(config: config)
        try await stuck.login(uid: "alice", authToken: world.tokens["alice"]!)
        let users = Log<User> { $0.uid }
        let list = UsersRequest.UsersRequestBuilder().build(client: stuck)
        list.fetchNext(onCachedUsers: users.cached, onServerUsers: users.server, onError: users.error)
        #expect(await users.next() == "cached: ")
        list.fetchNext(onCachedUsers: users.cached, onServerUsers: users.server, onError: users.error)
        #expect(
            await users.next() == "server: ", "the user, group, member and banned lists answer an empty server result")
        #expect(await users.next() == "error: \(ChatException.internetUnavailable)", "the first fetch still settles")

        let reactions = Log<Reaction> { $0.uid }
        let request = try ReactionsRequest.ReactionsRequestBuilder().set(messageId: 1).build(client: stuck)
        request.fetchNext(
            onCachedReactions: reactions.cached, onServerReactions: reactions.server, onError: reactions.error)
        #expect(await reactions.next() == "cached: ")
        request.fetchPrevious(
            onCachedReactions: reactions.cached, onServerReactions: reactions.server, onError: reactions.error)
        #expect(await reactions.next() == "error: \(ChatException.requestInProgress)")
        #expect(await reactions.next() == "error: \(ChatException.internetUnavailable)")
    }
}

@Suite(.timeLimit(.minutes(1))) struct PagingRegressionTests {
    @Test func offlineFetchesPageThroughTheSnapshots() async throws {
        let server = try LiveChatd()
        let token = try await server.user("alice")
        for uid in ["b1", "b2", "b3"] { _ = try await server.user(uid) }
        let alice = try makeClient(server, offline: offlineOn())
        try await alice.login(uid: "alice", authToken: token)
        let online = UsersRequest.UsersRequestBuilder().set(limit: 2).build(client: alice)
        for _ in 0..<2 { for try await _ in online.next() {} }
        server.stop()
        let offline = UsersRequest.UsersRequestBuilder().set(limit: 2).build(client: alice)
        var pages: [[String]] = []
        for _ in 0..<2 {
            do {
                for try await phase in offline.next() {
                    if case .cached(let users) = phase { pages.append(users.map(\.uid)) }
                }
            } catch {}
        }
        #expect(pages == [["alice", "b1"], ["b2", "b3"]])
    }

    @Test func theNextFetchMayStartInsideTheServerCallback() async throws {
        let server = try LiveChatd()
        let token = try await server.user("alice")
        for uid in ["b1", "b2", "b3"] { _ = try await server.user(uid) }
        let alice = try makeClient(server, offline: offlineOn())
        try await alice.login(uid: "alice", authToken: token)
        let request = UsersRequest.UsersRequestBuilder().set(limit: 2).build(client: alice)
        let log = PhaseLog()
        request.fetchNext(
            onCachedUsers: { _ in },
            onServerUsers: { users in
                log.push(.server([Int64(users.count)]))
                request.fetchNext(
                    onCachedUsers: { _ in }, onServerUsers: { log.push(.server([Int64($0.count)])) },
                    onError: { log.push(.error($0.errorCode)) })
            }, onError: { log.push(.error($0.errorCode)) })
        #expect(await log.next() == .server([2]))
        #expect(await log.next() == .server([2]), "the second page, not a busy answer")
    }

    @Test func aLogoutWhileALoginWaitsWins() async throws {
        let server = try LiveChatd()
        let token = try await server.user("alice")
        let first = try makeClient(server, offline: offlineOn())
        try await first.login(uid: "alice", authToken: token)
        let silent = try SilentServer()
        var config = first.config
        config.server = silent.url
        config.requestTimeout = 1
        let slow = try ChatClient(config: config)
        let before = slow.session.generation
        let login = Task { try await slow.login(uid: "alice", authToken: token) }
        while slow.session.generation == before { await Task.yield() }
        slow.logout()
        do {
            _ = try await login.value
            Issue.record("the login outlived the logout")
        } catch let error as ChatException {
            #expect(error.errorCode == ChatException.userNotLoggedIn)
        }
        #expect(slow.getLoggedInUser() == nil)
    }
}
