import ChatTesting
import Foundation
import OfflineChatCache
import OfflineChatProtocol
import OfflineChatWebSocket
import Testing

@testable import OfflineChat

/// The catch-up sync against a live chatd: bob's client goes offline (a proxy takes the
/// network away) while alice acts; after the reconnect bob's cache equals what the server
/// shows, and the callbacks come in the documented order.
@Suite(.timeLimit(.minutes(3))) struct SyncLiveTests {
    struct World {
        let server: LiveChatd
        let proxy: FaultProxy
        let clock: ManualClock
        let bob: ChatClient
        let log: SyncLog
        let connection: Recorder
        let aliceToken: String
        let bobToken: String
    }

    /// bob signed in through the proxy and cold-synced (nothing read yet).
    func world(
        chatd arguments: [String] = [], offline: OfflineConfig = offlineOn(),
        _ prepare: (LiveChatd, String) async throws -> Void = { _, _ in }
    ) async throws -> World {
        let world = try await signedIn(chatd: arguments, offline: offline, prepare)
        await world.clock.waitForSleepers(1)
        world.clock.advance(by: world.bob.config.connectionSettleDelay)
        let coldStart = await world.log.sweep()
        #expect(coldStart.first == "start reInstall=true" && coldStart.last == "finish reInstall=true")
        return world
    }

    /// bob signed in through the proxy and connected; his connection not settled yet, so his
    /// cold start has not begun. `transport`: his HTTP requests' (through the proxy either way).
    func signedIn(
        chatd arguments: [String] = [], offline: OfflineConfig = offlineOn(), transport: (any HTTPTransport)? = nil,
        _ prepare: (LiveChatd, String) async throws -> Void = { _, _ in }
    ) async throws -> World {
        // backlogs are seeded by thousands of sends
        let server = try LiveChatd(arguments: ["--write-rate", "0"] + arguments)
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        _ = try await server.user("carol")
        try await prepare(server, aliceToken)
        let proxy = try FaultProxy(upstreamPort: server.port)
        let clock = ManualClock()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-test-\(UUID().uuidString)")
        var config = ChatConfig(
            appID: "test", server: proxy.url, storageDirectory: storage, offline: offline,
            callbackQueue: DispatchQueue(label: "callbacks"), clock: clock,
            logger: StandardErrorLogger(minimumLevel: .error))
        config.httpTransport = transport
        let bob = try ChatClient(config: config)
        let log = SyncLog()
        log.attach(to: bob)
        let connection = Recorder(queue: config.callbackQueue)
        bob.addConnectionListener("c", connection)
        try await bob.login(uid: "bob", authToken: bobToken)
        _ = await connection.next(where: { $0 == "connected" })
        return World(
            server: server, proxy: proxy, clock: clock, bob: bob, log: log, connection: connection,
            aliceToken: aliceToken,
            bobToken: bobToken)
    }

    func read(_ world: World, _ conversation: String) async throws {
        let builder = MessagesRequest.MessageRequestBuilder().set(limit: 100)
        if conversation.hasPrefix("group_") {
            builder.set(guid: String(conversation.dropFirst(6)))
        } else {
            builder.set(uid: "alice")
        }
        for try await _ in try builder.build(client: world.bob).previous() {}
    }

    /// The server's messages of a conversation, as bob sees them.
    func serverMessages(_ world: World, _ conversation: String) async throws -> [MessagePayload] {
        let (_, data) = try await world.server.request(
            "GET", "\(Endpoints.conversations)/\(conversation)/messages?limit=100", token: world.bobToken)
        return try JSONDecoder().decode([MessagePayload].self, from: data)
    }

    func goOffline(_ world: World) async {
        world.proxy.mode = .offline
        _ = await world.connection.next(where: { $0 == "disconnected" })
    }

    func comeBack(_ world: World) async {
        world.proxy.mode = .pass
        await reconnectAndSettle(world.bob, clock: world.clock, connection: world.connection)
    }

    @Test func afterTheReconnectBobsCacheEqualsTheServerMessageByMessage() async throws {
        var ids: [String: Int64] = [:]
        let world = try await world { server, alice in
            _ = try await server.request(
                "POST", Endpoints.groups, token: alice, json: CreateGroupRequest(guid: "g", name: "G"))
            _ = try await server.request(
                "POST", "\(Endpoints.groups)/g/members", token: alice, json: AddMemberRequest(uid: "bob"))
            for text in ["one", "two", "three"] { ids[text] = try await server.send(text, from: alice, to: "bob") }
            ids["group"] = try await server.send("in the group", from: alice, to: "g", receiverType: .group)
        }
        try await read(world, "alice~bob")
        try await read(world, "group_g")

        await goOffline(world)
        let sent = OutboxTests.SendLog()
        world.bob.sendTextMessage(
            message: TextMessage(receiverUid: "alice", text: "from the train", receiverType: .user),
            onMessagePending: sent.pending, onMessageSent: { message in world.log.events.push("sent \(message.id)") },
            onError: sent.error)
        let alice = world.aliceToken
        let four = try await world.server.send("four", from: alice, to: "bob")
        _ = try await world.server.request(
            "PATCH", "\(Endpoints.messages)/\(ids["one"]!)", token: alice, json: EditMessageRequest(text: "one, edited")
        )
        _ = try await world.server.request("DELETE", "\(Endpoints.messages)/\(ids["two"]!)", token: alice)
        _ = try await world.server.request(
            "POST", "\(Endpoints.messages)/\(ids["three"]!)/reactions", token: alice,
            json: AddReactionRequest(reaction: "👍"))
        let groupFive = try await world.server.send("five in the group", from: alice, to: "g", receiverType: .group)
        _ = try await world.server.request(
            "POST", "\(Endpoints.groups)/g/members", token: alice, json: AddMemberRequest(uid: "carol"))

        await comeBack(world)
        var events: [String] = []
        while !(events.last ?? "").hasPrefix("finish") && events.last != "cancelled" {
            events += await world.log.sweep()
        }
        // Queued messages first, then the sweep.
        #expect(events.first?.hasPrefix("sent ") == true, "\(events)")
        let sweep = Array(events.drop { !$0.hasPrefix("start") })
        let newOnes = sweep.filter { $0.hasPrefix("new ") }
        #expect(
            newOnes.count == 3 && newOnes.allSatisfy { $0.hasSuffix(" sync") },
            "four, five and carol's addition: \(sweep)")
        #expect(newOnes.first == "new \(four) sync" && newOnes.contains("new \(groupFive) sync"))
        #expect(sweep.contains("synced [\(ids["one"]!), \(ids["two"]!), \(ids["three"]!)]"), "\(sweep)")
        let order = [
            "start reInstall=false", "conversations started", "messages started", "new \(four) sync", "synced",
            "messages 6 caughtUp",
            "progress 100", "finish reInstall=false"
        ]
        let positions = order.map { step in sweep.firstIndex { $0.hasPrefix(step) } ?? -1 }
        #expect(positions == positions.sorted() && !positions.contains(-1), "\(sweep)")
        #expect(world.log.swept.contains { $0 is ActionMessage }, "the sweep carries action messages too")

        // Message by message, bob's cache (as its cached phase serves it) equals the server.
        let cache = try #require(world.bob.session.current?.cache)
        for conversation in ["alice~bob", "group_g"] {
            let onServer = try await serverMessages(world, conversation)
            let cached = try cache.cachedPage(.conversation(conversation), .latest, limit: 100)
            #expect(
                cached == onServer.map(MessageRowView.asCached),
                "\(conversation): cached \(cached.map(\.id)), server \(onServer.map(\.id))")
        }
        #expect(world.bob.getLastSyncTimestamp() > 0 && world.bob.getSyncState() == .idle)
    }

    @Test func aBacklogOf2500ChangesTakesThreeSyncs() async throws {
        let world = try await world { server, alice in _ = try await server.send("hello", from: alice, to: "bob") }
        try await read(world, "alice~bob")
        await goOffline(world)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: 2_500, by: 8) {
                        _ = try await world.server.send("backlog \(index)", from: world.aliceToken, to: "bob")
                    }
                }
            }
            try await group.waitForAll()
        }
        await comeBack(world)
        #expect(await world.log.sweep().contains("messages 1000 partial"))
        world.clock.advance(by: 1_000)
        await #expect(throws: ChatException.self) { try await world.bob.forceSyncNow() }  // the cooldown
        world.clock.advance(by: SyncThrottle.cooldown)
        try await world.bob.forceSyncNow()
        #expect(await world.log.sweep().contains("messages 1000 partial"))
        world.clock.advance(by: SyncThrottle.cooldown)
        try await world.bob.forceSyncNow()
        #expect(await world.log.sweep().contains("messages 500 caughtUp"))
        let cache = try #require(world.bob.session.current?.cache)
        let onServer = try await serverMessages(world, "alice~bob")
        #expect(
            try cache.cachedPage(.conversation("alice~bob"), .latest, limit: 100)
                == onServer.map(MessageRowView.asCached),
            "the newest 100 come from one stretch, no hole")
        #expect(try cache.ranges(.conversation("alice~bob")).count == 1)
    }

    /// Issue #42: bob is offline while 3,000 messages arrive in a group and 5 in a direct chat.
    /// His catch-up reads the group's own log and his (pages of 1,000): every message arrives
    /// once, each conversation's in order, and both conversations read offline afterwards as
    /// one stretch equal to the server's.
    @Test func aGroupBacklogOf3000AndFiveDirectMessagesArriveOnceInOrder() async throws {
        let world = try await world { server, alice in
            _ = try await server.request(
                "POST", Endpoints.groups, token: alice, json: CreateGroupRequest(guid: "g", name: "G"))
            _ = try await server.request(
                "POST", "\(Endpoints.groups)/g/members", token: alice, json: AddMemberRequest(uid: "bob"))
            _ = try await server.send("hello", from: alice, to: "bob")
        }
        try await read(world, "alice~bob")
        try await read(world, "group_g")
        await goOffline(world)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: 3_000, by: 8) {
                        _ = try await world.server.send(
                            "group \(index)", from: world.aliceToken, to: "g", receiverType: .group)
                    }
                }
            }
            group.addTask {
                for index in 0..<5 {
                    _ = try await world.server.send("direct \(index)", from: world.aliceToken, to: "bob")
                }
            }
            try await group.waitForAll()
        }
        await comeBack(world)
        var swept: [BaseMessage] = []
        var outcomes: [String] = []
        for round in 0..<4 {
            if round > 0 {
                world.clock.advance(by: SyncThrottle.cooldown)
                try await world.bob.forceSyncNow()
            }
            outcomes += await world.log.sweep().filter { $0.hasPrefix("messages ") && !$0.hasSuffix("started") }
            swept += world.log.swept
        }
        #expect(
            outcomes == [
                "messages 1000 partial", "messages 1000 partial", "messages 1000 partial", "messages 5 caughtUp"
            ])
        #expect(Set(swept.map(\.id)).count == 3_005, "each message once")
        for conversation in ["group_g", "alice~bob"] {
            let ids = swept.filter { $0.conversationId == conversation }.map(\.id)
            #expect(ids == ids.sorted() && ids.count == (conversation == "group_g" ? 3_000 : 5), "\(conversation)")
        }
        await goOffline(world)
        let cache = try #require(world.bob.session.current?.cache)
        for conversation in ["group_g", "alice~bob"] {
            #expect(
                try cache.cachedPage(.conversation(conversation), .latest, limit: 100)
                    == (try await serverMessages(world, conversation)).map(MessageRowView.asCached), "\(conversation)")
            #expect(try cache.ranges(.conversation(conversation)).count == 1, "one stretch, no hole: \(conversation)")
        }
    }

    /// chatd keeps the last 5 changes of each log: while bob is away a group of his gets 20
    /// messages and his own log one. His sync resets that conversation only (no rebuild): the
    /// group's older cached messages go, the direct conversation's stay, the newest come in.
    @Test func aGroupPastRetentionResetsThatConversationOnly() async throws {
        var ids: [String: Int64] = [:]
        let world = try await world(chatd: ["--changelog-retention", "5"]) { server, alice in
            _ = try await server.request(
                "POST", Endpoints.groups, token: alice, json: CreateGroupRequest(guid: "g", name: "G"))
            _ = try await server.request(
                "POST", "\(Endpoints.groups)/g/members", token: alice, json: AddMemberRequest(uid: "bob"))
            ids["direct"] = try await server.send("before", from: alice, to: "bob")
            ids["group"] = try await server.send("group before", from: alice, to: "g", receiverType: .group)
        }
        try await read(world, "alice~bob")
        try await read(world, "group_g")
        let cache = try #require(world.bob.session.current?.cache)
        #expect(try cache.message(id: ids["group"]!) != nil)
        await goOffline(world)
        for index in 0..<20 {
            _ = try await world.server.send("g\(index)", from: world.aliceToken, to: "g", receiverType: .group)
        }
        _ = try await world.server.send("while away", from: world.aliceToken, to: "bob")
        await comeBack(world)
        let sweep = await world.log.sweep()
        #expect(!sweep.contains("start reInstall=true") && sweep.last == "finish reInstall=false", "\(sweep)")
        #expect(try cache.message(id: ids["group"]!) == nil, "the group's older messages went with the reset")
        #expect(try cache.message(id: ids["direct"]!) != nil, "the direct conversation's stayed")
        let newest = try cache.cachedPage(.conversation("group_g"), .latest, limit: 1)
        #expect(newest.map(\.text) == ["g19"])
    }

    /// How bob's sync point stops being one chatd can resume from while he is away.
    enum SyncPointLoss: CaseIterable {
        /// chatd keeps only the last 5 changes and more happen.
        case retention
        /// chatd is restored from a backup and given a new epoch (`chatd new-epoch`): his
        /// cursor may be past what the server holds.
        case newEpoch
    }

    /// Bob's sync point is refused as expired: the cache drops its messages (not the outbox)
    /// and a reInstall sync starts from the head.
    @Test(arguments: SyncPointLoss.allCases)
    func aLostSyncPointRebuildsTheCacheAsAReInstallSync(loss: SyncPointLoss) async throws {
        let world = try await world(chatd: loss == .retention ? ["--changelog-retention", "5"] : []) { server, alice in
            _ = try await server.send("before", from: alice, to: "bob")
        }
        try await read(world, "alice~bob")
        await goOffline(world)
        let queued = OutboxTests.SendLog()
        world.bob.sendTextMessage(
            message: TextMessage(receiverUid: "alice", text: "still queued", receiverType: .user),
            onMessagePending: queued.pending, onMessageSent: queued.sent, onError: queued.error)
        _ = await queued.log.next()
        #expect(await queued.log.next() == .error(ChatException.internetUnavailable))
        switch loss {
        case .retention:
            for index in 0..<12 {
                _ = try await world.server.send("while away \(index)", from: world.aliceToken, to: "bob")
            }
        case .newEpoch:
            world.server.stop()
            #expect(try world.server.admin(["new-epoch"]).hasPrefix("new epoch"))
            try world.server.restart()
        }
        await comeBack(world)
        let expired = await world.log.sweep()
        #expect(
            expired.contains("messages error cursor_expired") && expired.last == "failed reInstall=false", "\(expired)")
        let rebuilt = await world.log.sweep()
        #expect(rebuilt.first == "start reInstall=true" && rebuilt.last == "finish reInstall=true", "\(rebuilt)")
        #expect(!rebuilt.contains("messages started"))
        let cache = try #require(world.bob.session.current?.cache)
        let last = try cache.conversation(id: "alice~bob")?.lastMessage
        #expect(
            try cache.cachedPage(.conversation("alice~bob"), .latest, limit: 100).map(\.id)
                == [last?.id].compactMap { $0 },
            "no stale stretch survives the rebuild: only the last message its conversation list brought")
        #expect(world.bob.getPendingMessages().isEmpty, "the outbox flushed before the sweep, untouched by the rebuild")
        guard case .server = await queued.log.next() else {
            Issue.record("the queued message was not sent")
            return
        }
    }

    /// `clearOfflineCache` empties the cache; the next sync is a cold start.
    @Test func afterClearingTheCacheTheNextSyncIsAColdStart() async throws {
        let world = try await world()
        #expect(world.bob.getLastSyncTimestamp() > 0)
        world.bob.clearOfflineCache()
        #expect(world.bob.getLastSyncTimestamp() == 0)
        world.clock.advance(by: SyncThrottle.cooldown)
        try await world.bob.forceSyncNow()
        let sweep = await world.log.sweep()
        #expect(sweep.first == "start reInstall=true" && sweep.last == "finish reInstall=true", "\(sweep)")
        #expect(world.bob.getLastSyncTimestamp() > 0)
    }

    @Test func forceSyncNowTellsWhyItIsRefused() async throws {
        let world = try await world()
        world.clock.advance(by: 2_000)
        do {
            try await world.bob.forceSyncNow()
            Issue.record("accepted within the cooldown")
        } catch let error as ChatException {
            #expect(
                error.errorCode == ChatException.syncCooldown && error.errorDescription.contains("13000 ms"), "\(error)"
            )
        }
        world.bob.logout()
        do {
            try await world.bob.forceSyncNow()
            Issue.record("accepted without a user")
        } catch let error as ChatException {
            #expect(error.errorCode == ChatException.userNotLoggedIn)
        }
        let online = try makeClient(world.server)
        // logout revoked the first
        _ = try await online.login(uid: "bob", authToken: try await world.server.token("bob"))
        do {
            try await online.forceSyncNow()
            Issue.record("accepted without offline support")
        } catch let error as ChatException {
            #expect(error.errorCode == ChatException.offlineDisabled)
        }
        #expect(online.getSyncState() == .idle && online.getLastSyncTimestamp() == 0)
    }

    /// Bob blocks carol on another device while this one is offline: the reconnect's sweep
    /// refreshes the SDK's blocked list, so BlockedUserRequest's cached page shows her.
    @Test func theCatchUpSyncRefreshesTheBlockedList() async throws {
        let world = try await world()
        let cache = try #require(world.bob.session.current?.cache)
        #expect(try cache.blockedList()?.map(\.uid) == [])
        await goOffline(world)
        let (status, _) = try await world.server.request("PUT", "\(Endpoints.blocks)/carol", token: world.bobToken)
        #expect(status == 200 || status == 201 || status == 204)
        await comeBack(world)
        #expect(await world.log.sweep().last == "finish reInstall=false")
        #expect(try cache.blockedList()?.map(\.uid) == ["carol"])
    }

    /// The callback and silent forms of `forceSyncNow`, and a sync in flight (its answers held
    /// back by the proxy): `.syncing`, and a second request refused as in progress.
    @Test func whileASyncRunsItsStateIsSyncingAndAnotherIsRefused() async throws {
        let world = try await world()
        world.clock.advance(by: SyncThrottle.cooldown)
        world.proxy.mode = .stall
        let answers = EventQueue<String>(cancelled: "cancelled")
        world.bob.forceSyncNow(
            onSuccess: { answers.push("accepted") }, onError: { answers.push("refused \($0.errorCode)") })
        #expect(await answers.next() == "accepted")
        #expect(world.bob.getSyncState() == .syncing)
        world.bob.forceSyncNow(
            onSuccess: { answers.push("accepted") }, onError: { answers.push("refused \($0.errorCode)") })
        #expect(await answers.next() == "refused \(ChatException.syncInProgress)")
        // the silent form (outside async code) drops the refusal
        let silently: () -> Void = { world.bob.forceSyncNow() }
        silently()
        world.proxy.mode = .pass
        let sweep = await world.log.sweep()
        #expect(sweep.first == "start reInstall=false" && sweep.last == "finish reInstall=false", "\(sweep)")
        #expect(world.bob.getSyncState() == .idle)
    }

    /// Skips sync-log events up to bob hearing message `id` live.
    func heardLive(_ world: World, _ id: Int64) async {
        while true {
            let event = await world.log.events.next()
            if event == "new \(id) realtime" || event == "cancelled" { return }
        }
    }

    /// The changelog's head, as the server answers an empty cursor.
    func head(_ world: World) async throws -> String {
        let (_, data) = try await world.server.request(
            "GET", "\(Endpoints.changes)?cursor=&groupLogs=true", token: world.bobToken)
        return try JSONDecoder().decode(ChangelogPage.self, from: data).cursor
    }

    /// Returns once bob's client has handled every frame chatd sent him before now: alice's
    /// typing frame comes after them on his socket (the `cursor` frame that follows a change
    /// among them, with `--cursor-interval 0`, is then handled too).
    func everyFrameHandled(_ world: World, alice: WebSocketClient, heard: Recorder) async throws {
        try alice.send(text: #"{"type":"typing","typing":{"receiver":"bob","isTyping":true}}"#)
        _ = await heard.next(where: { $0 == "typing:alice" })
    }

    /// Online, the sync point follows the live stream (its `cursor` frames): after more live
    /// messages than a sync page holds and a short offline spell, the reconnect replays only
    /// what bob missed. A live message that arrives before the reconnect's sweep does not move
    /// the point (what was missed offline comes before it).
    @Test func theSyncPointFollowsTheLiveStreamSoAReconnectReplaysOnlyWhatWasMissed() async throws {
        let world = try await world(chatd: ["--cursor-interval", "0"])
        let cache = try #require(world.bob.session.current?.cache)
        let alice = try WebSocketClient.connect(
            to: URL(string: "ws://127.0.0.1:\(world.server.port)\(Endpoints.realtime)")!,
            headers: ["Authorization": "Bearer \(world.aliceToken)"])
        defer { alice.close() }
        let heard = Recorder(queue: world.bob.config.callbackQueue)
        world.bob.addMessageListener("typing", heard)
        let coldStart = try cache.syncPoint()
        var last: Int64 = 0
        for index in 0..<(SyncEngine.changePage + 100) {
            last = try await world.server.send("live \(index)", from: world.aliceToken, to: "bob")
        }
        await heardLive(world, last)
        try await everyFrameHandled(world, alice: alice, heard: heard)
        #expect(try cache.syncPoint().cursor == (try await head(world)), "the point is at the last live change")
        #expect(
            try cache.syncPoint().number == coldStart.number && cache.syncPoint().serverTime == coldStart.serverTime,
            "no sweep ran: the point's number and time stay")

        await goOffline(world)
        let offlinePoint = try cache.syncPoint()
        let missed = [
            try await world.server.send("missed 1", from: world.aliceToken, to: "bob"),
            try await world.server.send("missed 2", from: world.aliceToken, to: "bob")
        ]
        world.proxy.mode = .pass
        await world.clock.waitForSleepers(1)
        world.clock.advance(by: world.clock.nextDeadline ?? 0)
        _ = await world.connection.next(where: { $0 == "connected" })
        let early = try await world.server.send("before the sweep", from: world.aliceToken, to: "bob")
        await heardLive(world, early)
        try await everyFrameHandled(world, alice: alice, heard: heard)
        #expect(
            try cache.syncPoint() == offlinePoint,
            "the missed messages come before this one: the point must wait for the sweep")

        await world.clock.waitForSleepers(1)
        world.clock.advance(by: world.bob.config.connectionSettleDelay)
        let sweep = await world.log.sweep()
        #expect(
            sweep.contains("messages 2 caughtUp") && missed.allSatisfy { sweep.contains("new \($0) sync") }, "\(sweep)")
        // Caught up on this connection: the point follows the stream again.
        let after = try await world.server.send("after the sweep", from: world.aliceToken, to: "bob")
        await heardLive(world, after)
        try await everyFrameHandled(world, alice: alice, heard: heard)
        #expect(try cache.syncPoint().cursor == (try await head(world)))
        let onServer = try await serverMessages(world, "alice~bob")
        #expect(
            try cache.cachedPage(.conversation("alice~bob"), .latest, limit: 100)
                == onServer.map(MessageRowView.asCached))
    }
}

extension SyncLiveTests {
    /// A cold start reads the conversation list and where to resume the changelog. A message
    /// committed between those reads, while the live stream is down (a network flap), must
    /// still reach the cache: with the resume point read after the list, it was neither in the
    /// list nor after the point, and bob's cache never had it (offline, and after every later
    /// sync). Here the head read is held before it leaves bob's device while the flap happens
    /// and alice writes; then bob reconnects, syncs, and reads offline.
    @Test func aMessageCommittedDuringAColdStartIsNeverLost() async throws {
        let holding = SessionTasksTests.HoldingTransport(
            HTTPTransports.platformDefault(timeout: 15), holding: Endpoints.changes)
        let world = try await signedIn(transport: holding) { server, alice in
            _ = try await server.send("before", from: alice, to: "bob")
        }
        let (server, proxy, clock, bob, log, connection) =
            (world.server, world.proxy, world.clock, world.bob, world.log, world.connection)
        await clock.waitForSleepers(1)
        clock.advance(by: bob.config.connectionSettleDelay)
        var arrived = holding.arrived.stream.makeAsyncIterator()
        _ = await arrived.next()  // the cold start's head read waits on bob's side

        proxy.closeAll()  // the live stream drops: what alice writes now is not heard live
        _ = await connection.next(where: { $0 == "disconnected" })
        let between = try await server.send("during the cold start", from: world.aliceToken, to: "bob")
        holding.release()
        var events = await log.sweep()
        while !(events.last ?? "").hasPrefix("finish") && events.last != "cancelled" { events += await log.sweep() }
        #expect(events.first == "start reInstall=true" && events.last == "finish reInstall=true", "\(events)")

        proxy.mode = .offline
        let cache = try #require(bob.session.current?.cache)
        let cached = try cache.cachedPage(.conversation("alice~bob"), .latest, limit: 100).map(\.id)
        #expect(cached.contains(between), "offline, bob's cache has \(cached); the server committed \(between)")
    }
}

/// What the cache serves for a server message (a reply count of 0 reads back as none).
enum MessageRowView {
    static func asCached(_ message: MessagePayload) -> MessagePayload {
        var cached = message
        if cached.replyCount == 0 { cached.replyCount = nil }
        return cached
    }
}
