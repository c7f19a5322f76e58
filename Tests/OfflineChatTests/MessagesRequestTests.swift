import ChatTesting
import Foundation
import OfflineChatCache
import Testing

@testable import OfflineChat

/// The seed's two-phase contract on `MessagesRequest`, against a live chatd.
@Suite(.timeLimit(.minutes(1))) struct MessagesRequestTests {
    /// alice and bob with `count` messages from bob to alice; alice logged in with offline support.
    func setUp(
        count: Int = 5, offline: OfflineConfig = offlineOn(), clock: ManualClock = ManualClock()
    )
        async throws -> (server: LiveChatd, alice: ChatClient, bobToken: String, ids: [Int64])
    {
        let server = try LiveChatd()
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        var ids: [Int64] = []
        for index in 0..<count { ids.append(try await server.send("m\(index)", from: bobToken, to: "alice")) }
        let alice = try makeClient(server, clock: clock, offline: offline)
        try await alice.login(uid: "alice", authToken: aliceToken)
        return (server, alice, bobToken, ids)
    }

    func request(
        _ client: ChatClient, limit: Int = 30, configure: (MessagesRequest.MessageRequestBuilder) -> Void = { _ in }
    ) throws -> MessagesRequest {
        let builder = MessagesRequest.MessageRequestBuilder().set(uid: "bob").set(limit: limit)
        configure(builder)
        return try builder.build(client: client)
    }

    @Test func theCachedPhaseFiresFirstEvenWhenEmptyThenTheServerPhaseWrittenThrough() async throws {
        let (server, alice, _, ids) = try await setUp()
        defer { withExtendedLifetime(server) {} }
        let log = PhaseLog()
        try request(alice).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached([]))
        #expect(await log.next() == .server(ids))
        // A new request's cached phase now holds what the server returned.
        try request(alice).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached(ids))
        #expect(await log.next() == .server(ids))
    }

    @Test func offlineAReadEndsWithInternetUnavailableAfterTheCachedPage() async throws {
        let (server, alice, _, ids) = try await setUp()
        let log = PhaseLog()
        try request(alice).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        _ = await log.next()
        _ = await log.next()
        server.stop()
        try request(alice).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached(ids))
        #expect(await log.next() == .error(ChatException.internetUnavailable))
        // The async form: `.cached`, then the same error.
        var phases: [String] = []
        do {
            for try await phase in try request(alice).previous() {
                if case .cached(let messages) = phase {
                    phases.append("cached \(messages.count)")
                } else {
                    phases.append("server")
                }
            }
            Issue.record("the stream finished without the offline error")
        } catch let error as ChatException {
            phases.append(error.errorCode)
        }
        #expect(phases == ["cached 5", ChatException.internetUnavailable])
    }

    @Test func aRealServerErrorReachesOnErrorUnchanged() async throws {
        let (server, alice, _, _) = try await setUp(count: 0)
        defer { withExtendedLifetime(server) {} }
        let log = PhaseLog()
        let stranger = try MessagesRequest.MessageRequestBuilder().set(guid: "nope").build(client: alice)
        stranger.fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached([]))
        #expect(await log.next() == .error("not_found"))
    }

    @Test func withOfflineSupportOffThereIsNoCachedPhase() async throws {
        let (server, alice, _, ids) = try await setUp(offline: OfflineConfig())
        defer { withExtendedLifetime(server) {} }
        let log = PhaseLog()
        try request(alice).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        let event = await log.next()
        #expect(event == .server(ids), "\(event)")
        try request(alice).fetchPrevious(onSuccess: log.server, onError: log.error)
        #expect(await log.next() == .server(ids))
    }

    @Test func pagingBackwardsAndForwardsFollowsTheServer() async throws {
        let (server, alice, _, ids) = try await setUp(count: 7)
        defer { withExtendedLifetime(server) {} }
        let log = PhaseLog()
        let paged = try request(alice, limit: 3)
        paged.fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached([]))
        #expect(await log.next() == .server(Array(ids[4...])))
        paged.fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached([]), "older history is not cached yet")
        #expect(await log.next() == .server(Array(ids[1...3])))
        // Again from the top: the cache now answers both pages.
        let again = try request(alice, limit: 3)
        again.fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached(Array(ids[4...])))
        _ = await log.next()
        again.fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached(Array(ids[1...3])))
        _ = await log.next()
        let forward = try request(alice, limit: 2) { $0.set(messageId: ids[1]) }
        forward.fetchNext(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached(Array(ids[2...3])))
        #expect(await log.next() == .server(Array(ids[2...3])))
    }

    @Test func aServerOnlyPredicateBlanksTheCachedPhase() async throws {
        let (server, alice, _, ids) = try await setUp()
        defer { withExtendedLifetime(server) {} }
        let log = PhaseLog()
        try request(alice).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        _ = await log.next()
        _ = await log.next()
        try request(alice) { $0.set(searchKeyword: "m3") }.fetchPrevious(
            onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached([]))
        #expect(await log.next() == .server([ids[3]]))
        // A computable filter is answered from the cache.
        try request(alice) { $0.set(types: ["text"]) }.fetchPrevious(
            onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached(ids))
        #expect(await log.next() == .server(ids))
    }

    @Test func aSecondFetchWhileOneIsInFlightFailsWithoutACachedPhase() async throws {
        let (server, first, _, ids) = try await setUp(count: 2)
        let log = PhaseLog()
        try request(first).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        _ = await log.next()
        _ = await log.next()
        // The same user's next launch, against a server that accepts connections and never
        // answers: login falls back to the cache after the request timeout, and a fetch stays
        // in flight until its own timeout.
        let silent = try SilentServer()
        var config = first.config
        config.server = silent.url
        config.requestTimeout = 1
        let stuck = try ChatClient(config: config)
        _ = server
        try await stuck.login(uid: "alice", authToken: tokenOf(first))
        let busy = try request(stuck)
        busy.fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached(ids))
        busy.fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .error(ChatException.requestInProgress), "no cached phase for the second fetch")
        #expect(await log.next() == .error(ChatException.internetUnavailable), "the first one still settles")
    }

    /// The token a client logged in with (tests only).
    func tokenOf(_ client: ChatClient) -> String { client.session.current!.api.token }

    @Test func aCachedPageStopsAtAHole() async throws {
        let clock = ManualClock()
        let (server, alice, bobToken, ids) = try await setUp(count: 3, clock: clock)
        let queue = alice.config.callbackQueue
        let recorder = Recorder(queue: queue)
        alice.addMessageListener("r", recorder)
        alice.addConnectionListener("r", recorder)
        _ = await recorder.next(where: { $0 == "connected" })
        let log = PhaseLog()
        try request(alice).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        _ = await log.next()
        _ = await log.next()
        // A live message extends the cached stretch.
        let live = try await server.send("live", from: bobToken, to: "alice")
        _ = await recorder.next(where: { $0.hasPrefix("text:") })
        try request(alice).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached(ids + [live]))
        _ = await log.next()

        // alice drops off; bob writes while she is away; she comes back and hears one more live.
        server.stop()
        _ = await recorder.next(where: { $0 == "disconnected" })
        try server.restart()
        let missed = try await server.send("while away", from: bobToken, to: "alice")
        await clock.waitForSleepers(1)
        clock.advance(by: clock.nextDeadline ?? 0)
        _ = await recorder.next(where: { $0 == "connected" })
        let after = try await server.send("after", from: bobToken, to: "alice")
        _ = await recorder.next(where: { $0.hasPrefix("text:bob:after") })

        try request(alice).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached([after]), "the cached page stops at the hole before the missed message")
        #expect(await log.next() == .server(ids + [live, missed, after]))
        try request(alice).fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached(ids + [live, missed, after]), "the server page filled the hole")
        _ = await log.next()
    }
}

/// A TCP listener that never accepts: connections complete in the kernel's backlog and
/// requests wait for an answer that never comes.
final class SilentServer: @unchecked Sendable {
    let fd: Int32
    let port: Int

    init() throws {
        (fd, port) = try Loopback.listen(backlog: 16)
    }

    deinit { close(fd) }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
}
