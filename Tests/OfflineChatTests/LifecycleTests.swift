import ChatTesting
import Foundation
import OfflineChatCache
import OfflineChatLocking
import OfflineChatSQLite
import Testing

@testable import OfflineChat

/// `suspend()`, `resume()` and `networkChanged()`: what an app wires to its scene phase and a
/// network path monitor (against `FakeChatd`, on a manual clock: every wait is the clock's).
@Suite(.timeLimit(.minutes(1))) struct LifecycleTests {
    typealias Support = SessionTasksTests

    struct World {
        let fake: FakeChatd
        let clock: ManualClock
        let client: ChatClient
        let connection: Recorder
        let held: Support.HoldingTransport?
    }

    func world(holdingSends: Bool = false) async throws -> World {
        let fake = FakeChatd()
        let clock = ManualClock()
        let token = fake.addUser("alice")
        fake.addUser("bob")
        var config = Support.config(fake, clock: clock)
        let held = holdingSends ? Support.HoldingTransport(config.httpTransport!, holding: Endpoints.messages) : nil
        if let held { config.httpTransport = held }
        let client = try ChatClient(config: config)
        let connection = Recorder(queue: config.callbackQueue)
        client.addConnectionListener("c", connection)
        _ = try await client.login(uid: "alice", authToken: token)
        _ = await connection.next(where: { $0 == "connected" })
        return World(fake: fake, clock: clock, client: client, connection: connection, held: held)
    }

    /// Queues `text` without a connection (the async send throws "queued, not failed").
    func queue(_ text: String, from client: ChatClient) async {
        await #expect(throws: ChatException.self) {
            try await client.sendTextMessage(
                message: TextMessage(receiverUid: "bob", text: text, receiverType: .user))
        }
    }

    /// Lets the new connection settle (its timer is the clock's): the outbox flushes, then the sync runs.
    func settle(_ world: World) async {
        await world.clock.waitForSleepers(1)
        world.clock.advance(by: world.client.config.connectionSettleDelay)
    }

    func pendingTexts(_ world: World) -> [String?] {
        world.client.getPendingMessages().map { ($0 as? TextMessage)?.text }
    }

    @Test func suspendClosesTheConnectionAndResumeReconnectsAtOnceThenSendsWhatWaited() async throws {
        let world = try await world()
        world.client.suspend()
        #expect(await world.connection.next() == "disconnected")
        #expect(world.client.getConnectionStatus() == .disconnected)
        // Nothing of the connection waits on the clock: no settle timer, no backoff.
        while world.clock.sleeperCount > 0 { await Task.yield() }

        await queue("while away", from: world.client)
        // A network change does not wake a suspended connection.
        world.client.networkChanged()
        #expect(world.client.getConnectionStatus() == .disconnected)

        let before = world.clock.now()
        world.client.resume()
        #expect(await world.connection.next() == "connecting")
        #expect(await world.connection.next() == "connected")
        #expect(world.clock.now() == before, "no backoff was waited out")
        await settle(world)
        while world.fake.messages.count < 1 { await Task.yield() }
        #expect(world.fake.messages.map(\.text) == ["while away"])
        while !world.client.getPendingMessages().isEmpty { await Task.yield() }
    }

    @Test func aSuspendDuringAFlushLosesAndDuplicatesNothing() async throws {
        let world = try await world(holdingSends: true)
        let held = try #require(world.held)
        world.client.suspend()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        for text in ["one", "two", "three"] { await queue(text, from: world.client) }

        world.client.resume()
        _ = await world.connection.next(where: { $0 == "connected" })
        await settle(world)
        var arrived = held.arrived.stream.makeAsyncIterator()
        _ = await arrived.next()  // "one" is on the wire
        world.client.suspend()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        held.release()
        // "one" went through; the flush stopped there: the others wait, not failed.
        while world.fake.messages.count < 1 || pendingTexts(world).count > 2 { await Task.yield() }
        #expect(world.fake.messages.map(\.text) == ["one"])
        #expect(pendingTexts(world) == ["two", "three"])
        #expect(world.client.getPendingMessages().allSatisfy { $0.messageStatus == .pending })

        world.client.resume()
        _ = await world.connection.next(where: { $0 == "connected" })
        await settle(world)
        for _ in 0..<2 {
            _ = await arrived.next()
            held.release()
        }
        while !world.client.getPendingMessages().isEmpty { await Task.yield() }
        #expect(world.fake.messages.map(\.text) == ["one", "two", "three"], "each once, in order")
    }

    @Test func afterALongOutageANetworkChangeOrAResumeReconnectsWithoutWaitingOutTheBackoff() async throws {
        let world = try await world()
        world.fake.isReachable = false
        _ = await world.connection.next(where: { $0 == "disconnected" })
        // Failed attempts until the backoff reaches its cap.
        for _ in 0..<8 {
            await world.clock.waitForSleepers(1)
            world.clock.advance(by: world.client.config.reconnectMaxDelay)
        }
        await world.clock.waitForSleepers(1)  // waiting out a backoff of up to 30 s
        world.fake.isReachable = true
        let before = world.clock.now()
        world.client.networkChanged()
        _ = await world.connection.next(where: { $0 == "connected" })
        #expect(world.clock.now() == before, "connected without the clock moving")

        // The same from the foreground: `resume()` without a `suspend()` before it.
        world.fake.isReachable = false
        _ = await world.connection.next(where: { $0 == "disconnected" })
        await world.clock.waitForSleepers(1)
        world.fake.isReachable = true
        world.client.resume()
        _ = await world.connection.next(where: { $0 == "connected" })
        #expect(world.clock.now() == before)
    }

    /// A realtime transport whose every connect is refused: the socket never opens.
    struct RefusingTransport: RealtimeTransport {
        func connect(to url: URL, token: String) async throws -> any RealtimeSocket {
            throw ChatException.offline("refused")
        }
    }

    @Test func aBackgroundFlushSendsOverHTTPWithoutTheSocketExactlyOnce() async throws {
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        fake.addUser("bob")
        var config = Support.config(fake, clock: ManualClock())
        config.realtimeTransport = RefusingTransport()
        let client = try ChatClient(config: config)
        _ = try await client.login(uid: "alice", authToken: token)
        await queue("one", from: client)
        await queue("two", from: client)
        #expect(client.getConnectionStatus() != .connected)

        #expect(try await client.flushOutbox() == OutboxFlushOutcome(sent: 2, failed: 0, remaining: 0))
        #expect(fake.messages.map(\.text) == ["one", "two"])

        // No network: it stays queued, not failed.
        fake.isReachable = false
        await queue("three", from: client)
        #expect(try await client.flushOutbox() == OutboxFlushOutcome(sent: 0, failed: 0, remaining: 1))
        #expect(client.getPendingMessages().map(\.messageStatus) == [.pending])

        // Refused for good: reported failed (and kept for the app, with its reason).
        fake.isReachable = true
        fake.fail("POST", Endpoints.messages, status: 422, code: .validationFailed)
        #expect(try await client.flushOutbox() == OutboxFlushOutcome(sent: 0, failed: 1, remaining: 0))
        fake.removeAnswer("POST", Endpoints.messages)
        #expect(try await client.flushOutbox() == OutboxFlushOutcome(sent: 0, failed: 0, remaining: 0))
        #expect(fake.messages.map(\.text) == ["one", "two"], "nothing sent twice")
    }

    @Test func aBackgroundFlushNeedsASessionWithAnOutbox() async throws {
        let client = try ChatClient(
            config: ChatConfig(
                appID: "flush", server: URL(string: "http://127.0.0.1:9")!,
                storageDirectory: FileManager.default.temporaryDirectory))
        await #expect(throws: ChatException.self) { try await client.flushOutbox() }
    }
}

/// `sync()`: the catch-up sync awaited to its end, as a background refresh needs it.
@Suite(.timeLimit(.minutes(1))) struct AwaitedSyncTests {
    /// alice logged in and connected; the connection never settles (the clock stands still),
    /// so no sync runs but the ones a test asks for.
    func alice() async throws -> (FakeChatd, ChatClient) { try await AsyncSendTests().connected() }

    /// Messages from bob that alice's socket does not bring (it is down meanwhile, and stays
    /// down: its reconnect waits on the clock, which stands still).
    func missed(_ count: Int, _ fake: FakeChatd, _ client: ChatClient) async {
        let connection = Recorder(queue: client.config.callbackQueue)
        client.addConnectionListener("missed", connection)
        let wasConnected = client.getConnectionStatus() == .connected
        fake.isReachable = false
        if wasConnected { _ = await connection.next(where: { $0 == "disconnected" }) }
        for index in 0..<count { _ = fake.deliver(text: "missed \(index)", from: "bob", to: "alice") }
        fake.isReachable = true
        client.removeConnectionListener("missed")
    }

    func cachedTexts(_ client: ChatClient) throws -> [String?] {
        let cache = try #require(client.session.current?.cache)
        return try cache.cachedPage(.conversation("alice~bob"), .latest, limit: 2_000).map(\.text)
    }

    @Test func syncReturnsOnceTheCacheHasCaughtUpSweepAfterSweep() async throws {
        let (fake, client) = try await alice()
        #expect(try await client.sync() == SyncReport(sweeps: 1, reInstall: true, caughtUp: true), "a first sync")

        await missed(3, fake, client)
        #expect(try await client.sync() == SyncReport(sweeps: 1, reInstall: false, caughtUp: true))
        #expect(try cachedTexts(client).suffix(3) == ["missed 0", "missed 1", "missed 2"])

        // More than a page (1,000 changes): one call, two sweeps.
        await missed(1_500, fake, client)
        #expect(try await client.sync() == SyncReport(sweeps: 2, reInstall: false, caughtUp: true))
        #expect(try cachedTexts(client).last == "missed 1499", "the newest (the cache keeps 500 a conversation)")
        // No cooldown: it is not a pull-to-refresh.
        #expect(try await client.sync().sweeps == 1)
    }

    @Test func offlineSyncThrowsInternetUnavailable() async throws {
        let (fake, client) = try await alice()
        fake.isReachable = false
        do {
            _ = try await client.sync()
            Issue.record("an offline sync returned")
        } catch let error as ChatException {
            #expect(error.errorCode == ChatException.internetUnavailable)
        }
    }
}

/// A launch before the device's first unlock: the Keychain cannot answer, so the session runs
/// online only; once protected data is available it gets its cache back, and nothing was
/// counted toward a rebuild.
@Suite(.timeLimit(.minutes(1))) struct FirstUnlockTests {
    /// alice on a FakeChatd, offline support encrypted, her key store locked (every read fails
    /// until `failuresToSimulate` is set to 0: the first unlock).
    static func beforeTheFirstUnlock() -> (FakeChatd, String, InMemoryKeyStore, ChatConfig) {
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        var config = SessionTasksTests.config(fake, clock: ManualClock())
        config.offline.encryption = true
        let keys = InMemoryKeyStore()
        keys.failuresToSimulate = 1_000
        config.keyStore = keys
        return (fake, token, keys, config)
    }

    @Test(.enabled(if: Connection.cipherAvailable)) func aSessionStartedBeforeTheFirstUnlockGetsItsCacheAfterIt()
        async throws
    {
        let (_, token, keys, config) = Self.beforeTheFirstUnlock()
        let client = try ChatClient(config: config)
        _ = try await client.login(uid: "alice", authToken: token)
        #expect(!client.isOfflineEnabled(), "online only while the key store cannot answer")
        await client.protectedDataBecameAvailable()
        #expect(!client.isOfflineEnabled(), "still locked: still online only")

        keys.failuresToSimulate = 0  // unlocked
        await client.protectedDataBecameAvailable()
        #expect(client.isOfflineEnabled())
        #expect(client.getLoggedInUser()?.uid == "alice")
        let cache = try #require(client.session.current?.cache)
        #expect(!FileManager.default.fileExists(atPath: cache.directory.appendingPathComponent("open-failures").path))
    }

    /// On iOS the SDK hears the system's notification itself: the app wires nothing.
    @Test(.enabled(if: Connection.cipherAvailable)) func theSystemsUnlockNotificationOpensTheCache() async throws {
        let (_, token, keys, config) = Self.beforeTheFirstUnlock()
        let center = NotificationCenter()
        let unlocked = Notification.Name("test.protectedDataDidBecomeAvailable")
        let client = try ChatClient(
            config: config, transport: try #require(config.realtimeTransport),
            protectedDataNotification: (center, unlocked))
        let connection = Recorder(queue: config.callbackQueue)
        client.addConnectionListener("c", connection)
        _ = try await client.login(uid: "alice", authToken: token)
        #expect(await connection.next(where: { $0 == "connected" }) == "connected")
        #expect(!client.isOfflineEnabled())

        keys.failuresToSimulate = 0
        center.post(name: unlocked, object: nil)
        #expect(await connection.next(where: { $0 == "connected" }) == "connected", "the login with the cache")
        #expect(client.isOfflineEnabled())
        #expect(ProtectedDataObserver.platformNotification == nil, "Linux has no data protection to wait for")
    }

    /// The app's own call and the system's notification may come together: one login runs.
    @Test(.enabled(if: Connection.cipherAvailable)) func twoUnlockCallsAtOnceLogInOnce() async throws {
        let (fake, token, keys, config) = Self.beforeTheFirstUnlock()
        let client = try ChatClient(config: config)
        _ = try await client.login(uid: "alice", authToken: token)
        keys.failuresToSimulate = 0
        let before = fake.requests.filter { $0.hasSuffix(Endpoints.me) }.count
        async let first: Void = client.protectedDataBecameAvailable()
        async let second: Void = client.protectedDataBecameAvailable()
        _ = await (first, second)
        #expect(fake.requests.filter { $0.hasSuffix(Endpoints.me) }.count == before + 1, "\(fake.requests)")
        #expect(client.isOfflineEnabled())
    }

    /// The unlock comes while the device has no network (a new install: no cache to log in
    /// from): the login that opens the cache runs again once the connection is back.
    @Test(.enabled(if: Connection.cipherAvailable)) func anUnlockWithoutANetworkOpensTheCacheOnceItIsBack()
        async throws
    {
        let (fake, token, keys, config) = Self.beforeTheFirstUnlock()
        let client = try ChatClient(config: config)
        let connection = Recorder(queue: config.callbackQueue)
        client.addConnectionListener("c", connection)
        _ = try await client.login(uid: "alice", authToken: token)
        #expect(await connection.next(where: { $0 == "connected" }) == "connected")

        fake.isReachable = false
        #expect(await connection.next(where: { $0 == "disconnected" }) == "disconnected")
        keys.failuresToSimulate = 0
        await client.protectedDataBecameAvailable()
        #expect(!client.isOfflineEnabled(), "no network, no cache of this token yet: still online only")

        fake.isReachable = true
        client.networkChanged()
        // The old session's connection, or the new one's: the login runs again either way.
        while !client.isOfflineEnabled() {
            guard await connection.next(where: { $0 == "connected" }) == "connected" else {
                Issue.record("no login with the cache")
                break
            }
        }
    }
}

/// Review findings on the lifecycle: a session that begins in the background waits for
/// `resume()`, and `sync()` after an expired cursor awaits the rebuild already queued.
@Suite(.timeLimit(.minutes(1))) struct LifecycleEdgeTests {
    /// alice's token on a FakeChatd, a client on a manual clock, and its connection's events.
    static func alice() throws -> (token: String, client: ChatClient, connection: Recorder) {
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        let config = SessionTasksTests.config(fake, clock: ManualClock())
        let client = try ChatClient(config: config)
        let connection = Recorder(queue: config.callbackQueue)
        client.addConnectionListener("c", connection)
        return (token, client, connection)
    }

    /// Wi-Fi to cellular under a connected socket: it is replaced at once (the old one may be
    /// bound to the interface that went); in the background nothing happens.
    @Test func aMoveToOtherInterfacesReplacesAConnectedSocket() async throws {
        let (token, client, connection) = try Self.alice()
        _ = try await client.login(uid: "alice", authToken: token)
        #expect(await connection.next(where: { $0 == "connected" }) == "connected")
        client.networkMoved()
        #expect(await connection.next() == "disconnected")
        #expect(await connection.next() == "connecting")
        #expect(await connection.next() == "connected")

        client.suspend()
        #expect(await connection.next() == "disconnected")
        client.networkMoved()
        #expect(client.getConnectionStatus() == .disconnected, "suspended: stays down")
    }

    @Test func aSessionThatBeginsInTheBackgroundConnectsOnlyOnResume() async throws {
        let (token, client, connection) = try Self.alice()
        client.suspend()  // in the background before any session
        _ = try await client.login(uid: "alice", authToken: token)
        #expect(client.getConnectionStatus() == .disconnected)
        client.resume()
        #expect(await connection.next() == "connecting", "nothing was heard before the resume")
        #expect(await connection.next() == "connected")
    }

    /// Answers the first replay of the changelog from a cursor with `cursor_expired`.
    final class ExpiringOnce: HTTPTransport {
        let inner: any HTTPTransport
        private let expired = Locked(false)
        init(_ inner: any HTTPTransport) { self.inner = inner }
        func send(
            method: String, url: URL, headers: [String: String], body: Data?, maxBytes: Int
        ) async throws -> HTTPAnswer {
            let fromACursor =
                url.path == Endpoints.changes
                && body.flatMap { try? JSONDecoder().decode(ChangesRequest.self, from: $0) }?.cursor?.isEmpty == false
            let first =
                fromACursor
                && expired.withLock { done in
                    defer { done = true }
                    return !done
                }
            if first {
                let error = APIError(code: .cursorExpired, message: "too old")
                return HTTPAnswer(status: 410, body: try JSONEncoder().encode(error))
            }
            return try await inner.send(method: method, url: url, headers: headers, body: body, maxBytes: maxBytes)
        }
    }

    @Test func syncAfterAnExpiredCursorAwaitsTheQueuedRebuild() async throws {
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        fake.addUser("bob")
        var config = SessionTasksTests.config(fake, clock: ManualClock())
        config.httpTransport = ExpiringOnce(config.httpTransport!)
        let (client, _) = try await SessionTasksTests.connectedClient(config, uid: "alice", token: token)
        #expect(try await client.sync() == SyncReport(sweeps: 1, reInstall: true, caughtUp: true), "a first sync")
        _ = fake.deliver(text: "later", from: "bob", to: "alice")
        // The replay's cursor has expired: the rebuild it queues is the second and last sweep.
        #expect(try await client.sync() == SyncReport(sweeps: 2, reInstall: true, caughtUp: true))
    }
}
