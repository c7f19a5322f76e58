import ChatTesting
import Foundation
import OfflineChatCache
import Testing

@testable import OfflineChat

/// The durable outbox against a live chatd.
@Suite(.timeLimit(.minutes(1))) struct OutboxTests {
    /// What a send reported, in order.
    final class SendLog: @unchecked Sendable {
        let events = Recorder(queue: DispatchQueue(label: "unused"))
        let log = PhaseLog()
        var pending: @Sendable (BaseMessage) -> Void { { [log] in log.push(.cached([$0.localMessageId ?? -1])) } }
        var sent: @Sendable (BaseMessage) -> Void { { [log] in log.push(.server([$0.id])) } }
        var error: @Sendable (ChatException) -> Void { { [log] in log.push(.error($0.errorCode)) } }
    }

    struct World {
        let server: LiveChatd
        let alice: ChatClient
        let clock: ManualClock
        let connection: Recorder
        let bobToken: String
        let storage: URL
    }

    func world(offline: OfflineConfig = offlineOn(), serverArguments: [String] = []) async throws -> World {
        let server = try LiveChatd(arguments: serverArguments)
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        let clock = ManualClock()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-test-\(UUID().uuidString)")
        let alice = try makeClient(server, clock: clock, offline: offline, storage: storage)
        let connection = Recorder(queue: alice.config.callbackQueue)
        alice.addConnectionListener("c", connection)
        try await alice.login(uid: "alice", authToken: aliceToken)
        _ = await connection.next(where: { $0 == "connected" })
        return World(
            server: server, alice: alice, clock: clock, connection: connection, bobToken: bobToken, storage: storage)
    }

    /// bob's view of the conversation: what the server holds.
    func serverTexts(_ world: World) async throws -> [String] {
        let (_, data) = try await world.server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages?limit=100", token: world.bobToken)
        return try JSONDecoder().decode([MessagePayload].self, from: data).compactMap(\.text)
    }

    @Test func onlineASendIsPendingThenSentAndCachedOnce() async throws {
        let world = try await world()
        let send = SendLog()
        world.alice.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "hello", receiverType: .user),
            onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        guard case .cached(let local) = await send.log.next(), let localId = local.first, localId > 0 else {
            Issue.record("no pending callback first")
            return
        }
        guard case .server(let sent) = await send.log.next(), let id = sent.first, id > 0 else {
            Issue.record("not sent")
            return
        }
        #expect(try await serverTexts(world) == ["hello"])
        #expect(world.alice.getPendingMessages().isEmpty)
        let cache = try #require(world.alice.session.current?.cache)
        #expect(try cache.message(id: id)?.text == "hello", "the queued row became the sent message")
        // The realtime echo of one's own message arrives too; still one copy, same local id.
        let fence = Recorder(queue: world.alice.config.callbackQueue)
        world.alice.addMessageListener("fence", fence)
        _ = try await world.server.send("fence", from: world.bobToken, to: "alice")
        _ = await fence.next(where: { $0.hasPrefix("text:bob:fence") })
        let rows = try cache.cachedPage(.conversation("alice~bob"), .latest, limit: 30)
        #expect(rows.map(\.text) == ["hello", "fence"])
        _ = localId
    }

    /// chatd's rate limit (429 with `Retry-After`) holds the outbox back without failing a
    /// message: it waits exactly as long as asked, the waits use none of its attempts (more
    /// rounds than `maxAttempts` here), and everything goes out once, in order.
    @Test func aRateLimitedOutboxWaitsAsAskedAndFailsNothing() async throws {
        let world = try await world(serverArguments: ["--write-rate", "2"])  // one at once, then one every 30 s
        await world.clock.waitForSleepers(1)
        world.clock.advance(by: world.alice.config.connectionSettleDelay)
        let send = SendLog()
        let texts = (0..<8).map { "m\($0)" }
        // chatd's clock is the wall clock plus what the test adds, so the bucket also refills by the
        // real time the run takes (seconds on a loaded machine): its wait is 30 s less that.
        let started = ContinuousClock.now
        for text in texts {
            world.alice.sendTextMessage(
                message: TextMessage(receiverUid: "bob", text: text, receiverType: .user),
                onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        }
        var sent = 0
        while sent < texts.count {
            switch await send.log.next() {
            case .cached: continue
            case .server: sent += 1
            case .error(let code):
                Issue.record("a rate-limited send reported \(code)")
                return
            }
            guard sent < texts.count else { break }
            await world.clock.waitForSleepers(1)
            let real = started.duration(to: .now).components.seconds
            #expect(
                (29_000 - real * 1000...30_000).contains(world.clock.nextDeadline ?? 0),
                "the wait chatd asked for (30 s less \(real) s)")
            try await world.server.advanceClock(seconds: 30)
            world.clock.advance(by: 30_000)
        }
        #expect(try await serverTexts(world) == texts)
        #expect(world.alice.getPendingMessages().isEmpty)
    }

    @Test func clearingTheCacheDiscardsTheOutbox() async throws {
        let world = try await world()
        world.server.stop()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        let send = SendLog()
        world.alice.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "gone", receiverType: .user),
            onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        _ = await send.log.next()
        _ = await send.log.next()
        let outcomes = OutboxOutcomes()
        world.alice.addMessageListener("outbox", outcomes)
        world.alice.clearOfflineCache()
        #expect(await send.log.next() == .error(ChatException.messageDiscarded))
        #expect(await outcomes.events.next() == "failed gone discarded \(ChatException.messageDiscarded)")
        #expect(world.alice.getPendingMessages().isEmpty)
        #expect(world.alice.isOfflineEnabled(), "still logged in, with an empty cache")
    }

    @Test func offlineASendIsQueuedAndGoesOutOnceAfterTheReconnectSettles() async throws {
        let world = try await world()
        world.server.stop()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        let send = SendLog()
        for text in ["one", "two"] {
            world.alice.sendTextMessage(
                message: TextMessage(receiverUid: "bob", text: text, receiverType: .user),
                onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        }
        var seen: [PhaseLog.Event] = []
        for _ in 0..<4 { seen.append(await send.log.next()) }
        #expect(seen.filter { $0 == .error(ChatException.internetUnavailable) }.count == 2, "queued, not failed")
        #expect(world.alice.getPendingMessages().map(\.messageStatus) == [.pending, .pending])

        try world.server.restart()
        await reconnectAndSettle(world.alice, clock: world.clock, connection: world.connection)
        guard case .server = await send.log.next(), case .server = await send.log.next() else {
            Issue.record("not sent")
            return
        }
        #expect(try await serverTexts(world) == ["one", "two"], "exactly once, in composed order")
        #expect(world.alice.getPendingMessages().isEmpty)
    }

    @Test func aRefusedSendFailsPermanentlyWithTheServersError() async throws {
        let world = try await world()
        let send = SendLog()
        world.alice.sendTextMessage(
            message: TextMessage(receiverUid: "ghost", text: "hi", receiverType: .user),
            onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        guard case .cached(let local) = await send.log.next(), let localId = local.first else {
            Issue.record("not queued")
            return
        }
        #expect(await send.log.next() == .error("not_found"))
        let failed = try #require(world.alice.getPendingMessages().first)
        #expect(
            failed.messageStatus == .failed && failed.getFailureReason() == .permanent
                && failed.failureError?.errorCode == "not_found")
        world.alice.retryAllFailedMessages()  // transient failures only: nothing happens
        #expect(world.alice.getPendingMessages().first?.getFailureReason() == .permanent)
        world.alice.discardLocalMessage(localId: localId)
        #expect(world.alice.getPendingMessages().isEmpty)
    }

    @Test func theOutboxRefusesNewSendsWhenFullAndDropsNothing() async throws {
        var offline = offlineOn()
        offline.maxPendingMessages = 2
        let world = try await world(offline: offline)
        world.server.stop()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        let send = SendLog()
        for text in ["a", "b", "c"] {
            world.alice.sendTextMessage(
                message: TextMessage(receiverUid: "bob", text: text, receiverType: .user),
                onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        }
        var errors: [String] = []
        for _ in 0..<5 { if case .error(let code) = await send.log.next() { errors.append(code) } }
        #expect(
            errors.sorted()
                == [ChatException.internetUnavailable, ChatException.internetUnavailable, ChatException.outboxFull]
                .sorted())
        #expect(world.alice.getPendingMessages().compactMap { ($0 as? TextMessage)?.text } == ["a", "b"])
    }

    @Test func theOutboxSurvivesARestartAndLogoutDiscardsIt() async throws {
        let world = try await world()
        world.server.stop()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        let send = SendLog()
        world.alice.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "survivor", receiverType: .user),
            onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        _ = await send.log.next()
        _ = await send.log.next()
        // The app restarts (still offline): the queued message is still there.
        let token = world.alice.session.current!.api.token
        let relaunched = try makeClient(world.server, clock: world.clock, offline: offlineOn(), storage: world.storage)
        try await relaunched.login(uid: "alice", authToken: token)
        #expect(relaunched.getPendingMessages().compactMap { ($0 as? TextMessage)?.text } == ["survivor"])
        // Logout fails whatever is queued, with `.discarded`.
        world.alice.logout()
        #expect(await send.log.next() == .error(ChatException.messageDiscarded))
    }

    /// One's own message sent from another device is heard live (as the sync would report
    /// it); this device's own sends are not (their echo is the outbox's).
    @Test func ownMessagesFromAnotherDeviceAreHeardAndThisDevicesEchoIsNot() async throws {
        let world = try await world()
        let heard = Recorder(queue: world.alice.config.callbackQueue)
        world.alice.addMessageListener("heard", heard)
        let send = SendLog()
        world.alice.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "from the phone", receiverType: .user),
            onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        _ = await send.log.next()
        guard case .server = await send.log.next() else {
            Issue.record("not sent")
            return
        }
        // The laptop: another client of alice's, straight to chatd.
        _ = try await world.server.send("from the laptop", from: world.alice.session.current!.api.token, to: "bob")
        #expect(
            await heard.next(where: { $0.hasPrefix("text:") }) == "text:alice:from the laptop:realtime",
            "the phone's own send was not heard as received; the laptop's was")
    }

    /// Messages queued before a restart have no send callbacks any more: their outcomes
    /// reach the message listeners (`onOutboxMessageSent` / `onOutboxMessageFailed`).
    @Test func afterARestartTheListenersHearWhatBecameOfTheQueuedMessages() async throws {
        let world = try await world()
        world.server.stop()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        let send = SendLog()
        for (to, text) in [("bob", "made it"), ("ghost", "refused")] {
            world.alice.sendTextMessage(
                message: TextMessage(receiverUid: to, text: text, receiverType: .user),
                onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
            _ = await send.log.next()
            _ = await send.log.next()
        }
        let token = world.alice.session.current!.api.token
        world.alice.end(world.alice.session.current!, wipe: false)  // the app quits
        try world.server.restart()

        let relaunched = try makeClient(world.server, clock: world.clock, offline: offlineOn(), storage: world.storage)
        let outcomes = OutboxOutcomes()
        relaunched.addMessageListener("outbox", outcomes)
        let connection = Recorder(queue: relaunched.config.callbackQueue)
        relaunched.addConnectionListener("c", connection)
        try await relaunched.login(uid: "alice", authToken: token)
        _ = await connection.next(where: { $0 == "connected" })
        await world.clock.waitForSleepers(1)
        world.clock.advance(by: relaunched.config.connectionSettleDelay)
        var heard = [await outcomes.events.next(), await outcomes.events.next()]
        heard.sort()
        #expect(
            heard.count == 2 && heard[0].hasPrefix("failed refused permanent not_found")
                && heard[1].hasPrefix("sent made it"), "\(heard)")
        #expect(!heard[1].hasSuffix(" 0"), "the sent message has its server id")
        #expect(relaunched.getPendingMessages().map(\.messageStatus) == [.failed])
    }

    /// What the message listeners hear of the outbox.
    final class OutboxOutcomes: MessageListener, Sendable {
        let events = EventQueue<String>(cancelled: "cancelled")
        func onOutboxMessageSent(_ message: BaseMessage) {
            events.push("sent \((message as? TextMessage)?.text ?? "") \(message.localMessageId ?? 0) \(message.id)")
        }
        func onOutboxMessageFailed(_ message: BaseMessage) {
            events.push(
                "failed \((message as? TextMessage)?.text ?? "") \(message.getFailureReason()?.rawValue ?? "-") \(message.failureError?.errorCode ?? "-")"
            )
        }
    }

    @Test func editsDeletionsAndReactionsNeedAConnection() async throws {
        let world = try await world()
        let id = try await world.server.send("x", from: world.bobToken, to: "alice")
        world.server.stop()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        await #expect(throws: ChatException.self) { try await world.alice.addReaction("👍", to: id) }
        await #expect(throws: ChatException.self) { try await world.alice.deleteMessage(id) }
        await #expect(throws: ChatException.self) { try await world.alice.editMessage(id, text: "y") }
    }
}

/// Faults between the SDK and chatd: exactly once all the same.
@Suite(.timeLimit(.minutes(1))) struct OutboxFaultTests {
    /// chatd behind a `FaultProxy`; alice (offline support on, manual clock) logged in
    /// through it and connected; bob's token to read what the server holds.
    func proxiedWorld(
        requestTimeout: TimeInterval
    ) async throws
        -> (
            server: LiveChatd, proxy: FaultProxy, clock: ManualClock, alice: ChatClient, connection: Recorder,
            bobToken: String
        )
    {
        let server = try LiveChatd()
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        let proxy = try FaultProxy(upstreamPort: server.port)
        let clock = ManualClock()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-test-\(UUID().uuidString)")
        var config = ChatConfig(
            appID: "test", server: proxy.url, storageDirectory: storage, offline: offlineOn(),
            callbackQueue: DispatchQueue(label: "callbacks"), clock: clock,
            logger: StandardErrorLogger(minimumLevel: .error))
        config.requestTimeout = requestTimeout
        let alice = try ChatClient(config: config)
        let connection = Recorder(queue: config.callbackQueue)
        alice.addConnectionListener("c", connection)
        try await alice.login(uid: "alice", authToken: aliceToken)
        _ = await connection.next(where: { $0 == "connected" })
        return (server, proxy, clock, alice, connection, bobToken)
    }

    @Test func aLostAcknowledgementFollowedByARetryYieldsOneMessage() async throws {
        let (server, proxy, clock, alice, _, bobToken) = try await proxiedWorld(requestTimeout: 5)

        proxy.mode = .dropResponse
        let log = PhaseLog()
        alice.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "once", receiverType: .user),
            onMessagePending: { log.push(.cached([$0.localMessageId ?? 0])) },
            onMessageSent: { log.push(.server([$0.id])) }, onError: { log.push(.error($0.errorCode)) })
        guard case .cached = await log.next() else {
            Issue.record("not queued")
            return
        }
        // The server committed it; the answer was lost: a retry is scheduled on the clock.
        await clock.waitForSleepers(2)  // the settle timer and the retry
        proxy.mode = .pass
        clock.advance(by: 1_000)
        guard case .server(let ids) = await log.next(), let id = ids.first, id > 0 else {
            Issue.record("not sent")
            return
        }
        let (_, data) = try await server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages", token: bobToken)
        let held = try JSONDecoder().decode([MessagePayload].self, from: data)
        #expect(held.map(\.text) == ["once"] && held.first?.id == id, "one message, whatever the retries")
        #expect(alice.getPendingMessages().isEmpty)
    }

    @Test func aResponseCutMidBodyIsRetriedToo() async throws {
        let (server, proxy, clock, alice, _, bobToken) = try await proxiedWorld(requestTimeout: 15)
        proxy.mode = .cutMidBody
        let log = PhaseLog()
        for text in ["first", "second"] {
            alice.sendTextMessage(
                message: TextMessage(receiverUid: "bob", text: text, receiverType: .user),
                onMessagePending: { log.push(.cached([$0.localMessageId ?? 0])) },
                onMessageSent: { log.push(.server([$0.id])) }, onError: { log.push(.error($0.errorCode)) })
        }
        _ = await log.next()
        _ = await log.next()
        await clock.waitForSleepers(2)
        proxy.mode = .pass
        clock.advance(by: 1_000)
        guard case .server = await log.next(), case .server = await log.next() else {
            Issue.record("not sent")
            return
        }
        let (_, data) = try await server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages", token: bobToken)
        #expect(try JSONDecoder().decode([MessagePayload].self, from: data).map(\.text) == ["first", "second"])
    }

    @Test func aStalledAnswerTimesOutAndTheRetryStillYieldsOneMessage() async throws {
        let (server, proxy, clock, alice, _, bobToken) = try await proxiedWorld(requestTimeout: 1)
        proxy.mode = .stall
        let log = PhaseLog()
        alice.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "patient", receiverType: .user),
            onMessagePending: { log.push(.cached([$0.localMessageId ?? 0])) },
            onMessageSent: { log.push(.server([$0.id])) }, onError: { log.push(.error($0.errorCode)) })
        _ = await log.next()
        await clock.waitForSleepers(2)  // the settle timer, and the retry after the timeout
        proxy.mode = .pass
        clock.advance(by: 1_000)
        guard case .server = await log.next() else {
            Issue.record("not sent")
            return
        }
        let (_, data) = try await server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages", token: bobToken)
        #expect(try JSONDecoder().decode([MessagePayload].self, from: data).map(\.text) == ["patient"])
    }

    @Test func aNetworkFlapQueuesAndTheReconnectFlushes() async throws {
        let (server, proxy, clock, alice, connection, bobToken) = try await proxiedWorld(requestTimeout: 15)
        proxy.closeAll()
        _ = await connection.next(where: { $0 == "disconnected" })
        let log = PhaseLog()
        alice.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "after the flap", receiverType: .user),
            onMessagePending: { log.push(.cached([$0.localMessageId ?? 0])) },
            onMessageSent: { log.push(.server([$0.id])) }, onError: { log.push(.error($0.errorCode)) })
        _ = await log.next()
        #expect(await log.next() == .error(ChatException.internetUnavailable), "queued, not failed")
        await reconnectAndSettle(alice, clock: clock, connection: connection)
        guard case .server = await log.next() else {
            Issue.record("not sent")
            return
        }
        let (_, data) = try await server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages", token: bobToken)
        #expect(try JSONDecoder().decode([MessagePayload].self, from: data).map(\.text) == ["after the flap"])
    }
}
