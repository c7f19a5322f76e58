import ChatTesting
import Foundation
import OfflineChatLocking
import Testing

@testable import OfflineChat

/// A session owns every task working for it: its end cancels them, and none is left waiting on
/// the clock for a session that is gone (against `FakeChatd`, on a manual clock).
@Suite(.timeLimit(.minutes(1))) struct SessionTasksTests {
    static func config(_ fake: FakeChatd, clock: ManualClock) -> ChatConfig {
        var config = ChatConfig(
            appID: "tasks", server: fake.url,
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("tasks-\(UUID())"),
            offline: offlineOn(), callbackQueue: DispatchQueue(label: "tasks"), clock: clock,
            logger: StandardErrorLogger(minimumLevel: .error))
        config.keyStore = InMemoryKeyStore()
        fake.configure(&config)
        return config
    }

    /// The callback form of logout; true once it reported. The wait is an AsyncStream's, which
    /// ends on cancellation: a logout that never reports fails at the time limit, not hangs.
    static func logOut(_ client: ChatClient) async -> Bool {
        let loggedOut = AsyncStream<Void>.makeStream()
        client.logout(onSuccess: { loggedOut.continuation.yield() }, onError: { _ in loggedOut.continuation.yield() })
        var reported = loggedOut.stream.makeAsyncIterator()
        return await reported.next() != nil
    }

    /// A client of `config` logged in as `uid` and connected, and its session.
    static func connectedClient(
        _ config: ChatConfig, uid: String, token: String
    ) async throws -> (ChatClient, UserSession) {
        let client = try ChatClient(config: config)
        let connection = Recorder(queue: config.callbackQueue)
        client.addConnectionListener("c", connection)
        _ = try await client.login(uid: uid, authToken: token)
        _ = await connection.next(where: { $0 == "connected" })
        return (client, try #require(client.session.current))
    }

    @Test func logoutEndsTheOutboxsBackoffWaitWithTheSession() async throws {
        let fake = FakeChatd()
        let clock = ManualClock()
        let token = fake.addUser("alice")
        fake.addUser("bob")
        let config = Self.config(fake, clock: clock)
        let (client, session) = try await Self.connectedClient(config, uid: "alice", token: token)

        fake.fail("POST", Endpoints.messages, status: 503, code: .unavailable)
        let failed = AsyncStream<Void>.makeStream()
        client.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "retried later", receiverType: .user),
            onMessageSent: { _ in }, onError: { _ in failed.continuation.yield() })
        // The connection's settle wait and the outbox's backoff after the 503.
        await clock.waitForSleepers(2)
        #expect(session.tasks.count >= 3, "the connection's loop, its settle wait and the backoff's wake-up")

        // The callback form reports once the token is revoked and the session's tasks returned.
        #expect(await Self.logOut(client), "the logout reported")
        #expect(session.tasks.count == 0)
        #expect(clock.sleeperCount == 0, "nothing of the session still waits on the clock")
        #expect(session.tasks.start {} == nil, "an ended session starts nothing")
    }

    /// A realtime transport whose connect hangs, as a blocking connect to a host that never
    /// answers does, and ignores cancellation; `release` finally hands it a socket.
    final class HangingTransport: RealtimeTransport {
        struct Socket: RealtimeSocket {
            let closed: AsyncStream<Void>.Continuation
            var messages: AsyncThrowingStream<String, any Error> { AsyncThrowingStream { _ in } }
            func send(_ text: String) throws {}
            func close() { closed.yield() }
        }
        let attempts = AsyncStream<Void>.makeStream()
        let closed = AsyncStream<Void>.makeStream()
        private let pending = Locked<[CheckedContinuation<any RealtimeSocket, Never>]>([])

        func connect(to url: URL, token: String) async throws -> any RealtimeSocket {
            await withCheckedContinuation { continuation in
                pending.withLock { $0.append(continuation) }
                attempts.continuation.yield()
            }
        }

        func release() {
            for waiting in pending.withLock({ $0 }) { waiting.resume(returning: Socket(closed: closed.continuation)) }
        }
    }

    @Test func aLogoutDoesNotWaitForAConnectInFlightAndASocketItOpensLateIsClosed() async throws {
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        var config = Self.config(fake, clock: ManualClock())
        let hanging = HangingTransport()
        config.realtimeTransport = hanging
        let client = try ChatClient(config: config)
        _ = try await client.login(uid: "alice", authToken: token)
        var attempts = hanging.attempts.stream.makeAsyncIterator()
        _ = await attempts.next()
        let session = try #require(client.session.current)
        #expect(session.tasks.count >= 1, "the connection's loop is one of the session's tasks")

        // Without abandoning the connect, the logout's callback would wait for it.
        #expect(await Self.logOut(client), "the logout reported")
        #expect(session.tasks.count == 0)
        hanging.release()
        var closed = hanging.closed.stream.makeAsyncIterator()
        #expect(await closed.next() != nil, "the socket the abandoned connect opened is closed")
    }

    /// Holds every request whose path contains `held` until `release`, ignoring cancellation
    /// (as the Linux transport does); the rest goes to `inner`.
    final class HoldingTransport: HTTPTransport {
        let inner: any HTTPTransport
        let held: String
        let arrived = AsyncStream<Void>.makeStream()
        /// The path of each request answered (any path), as it is answered.
        let answered = AsyncStream<String>.makeStream()
        private let pending = Locked<[CheckedContinuation<Void, Never>]>([])

        init(_ inner: any HTTPTransport, holding held: String) {
            self.inner = inner
            self.held = held
        }

        func send(
            method: String, url: URL, headers: [String: String], body: Data?, maxBytes: Int
        ) async throws -> HTTPAnswer {
            if url.path.contains(held) {
                await withCheckedContinuation { continuation in
                    pending.withLock { $0.append(continuation) }
                    arrived.continuation.yield()
                }
            }
            let answer = try await inner.send(
                method: method, url: url, headers: headers, body: body, maxBytes: maxBytes)
            answered.continuation.yield(url.path)
            return answer
        }

        /// Lets every request held so far go on (later ones are held again).
        func release() {
            let waiting = pending.withLock { pending in
                defer { pending = [] }
                return pending
            }
            for request in waiting { request.resume() }
        }
    }

    final class DetailsListener: MessageDetailsListener {
        let errors = AsyncStream<ChatException?>.makeStream()
        func onCachedMessage(_ message: BaseMessage) {}
        func onServerMessage(_ message: BaseMessage?) { Issue.record("a read the logout ended answered") }
        func onError(_ error: ChatException?) { errors.continuation.yield(error) }
    }

    @Test func aReadInFlightAtLogoutFailsNotLoggedInAndTheLogoutDoesNotWaitForIt() async throws {
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        var config = Self.config(fake, clock: ManualClock())
        let holding = HoldingTransport(try #require(config.httpTransport), holding: Endpoints.messages + "/")
        config.httpTransport = holding
        let client = try ChatClient(config: config)
        _ = try await client.login(uid: "alice", authToken: token)
        let listener = DetailsListener()
        client.getMessageDetails(7, listener: listener)
        var arrived = holding.arrived.stream.makeAsyncIterator()
        _ = await arrived.next()

        #expect(await Self.logOut(client), "the logout reported while the read still waited")
        var errors = listener.errors.stream.makeAsyncIterator()
        #expect(await errors.next()??.code == .userNotLoggedIn)
        holding.release()
    }
}
