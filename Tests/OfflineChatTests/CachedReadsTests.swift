import ChatTesting
import Foundation
import OfflineChatLocking
import Testing

@testable import OfflineChat
@testable import OfflineChatCache

/// Conversations, single lookups and the cache's lifetime, against a live chatd.
@Suite(.timeLimit(.minutes(1))) struct CachedReadsTests {
    /// chatd with alice and bob, one message from bob to alice, and alice logged in with
    /// offline support (her cache empty).
    func aliceWithAMessageFromBob() async throws -> (LiveChatd, ChatClient, Int64) {
        let server = try LiveChatd()
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        let id = try await server.send("hello", from: bobToken, to: "alice")
        let alice = try makeClient(server, offline: offlineOn())
        try await alice.login(uid: "alice", authToken: aliceToken)
        return (server, alice, id)
    }

    final class Details: ConversationDetailsListener, MessageDetailsListener, @unchecked Sendable {
        let log = PhaseLog()
        func onCachedConversation(_ conversation: Conversation) {
            log.push(.cached([conversation.lastMessage?.id ?? 0]))
        }
        func onServerConversation(_ conversation: Conversation?) {
            log.push(.server([conversation?.lastMessage?.id ?? 0]))
        }
        func onCachedMessage(_ message: BaseMessage) { log.push(.cached([message.id])) }
        func onServerMessage(_ message: BaseMessage?) { log.push(.server([message?.id ?? 0])) }
        func onError(_ error: ChatException?) { log.push(.error(error?.errorCode ?? "")) }
    }

    @Test func theConversationListComesFromTheCacheThenTheServer() async throws {
        let server = try LiveChatd()
        let aliceToken = try await server.user("alice")
        for peer in ["p1", "p2", "p3"] {
            let token = try await server.user(peer)
            try await server.send("hi from \(peer)", from: token, to: "alice")
        }
        let alice = try makeClient(server, offline: offlineOn())
        try await alice.login(uid: "alice", authToken: aliceToken)
        let seen = Locked<[String]>([])
        func run(_ request: ConversationRequest) async throws {
            for try await phase in request.next() {
                switch phase {
                case .cached(let list):
                    seen.withLock {
                        $0.append("cached " + list.map(\.conversationWith.entityID).joined(separator: ","))
                    }
                case .server(let list):
                    seen.withLock {
                        $0.append("server " + list.map(\.conversationWith.entityID).joined(separator: ","))
                    }
                }
            }
        }
        try await run(ConversationRequest.ConversationRequestBuilder(limit: 2).build(client: alice))
        #expect(seen.current == ["cached ", "server p3,p2"])
        let paged = ConversationRequest.ConversationRequestBuilder(limit: 2).build(client: alice)
        try await run(paged)
        try await run(paged)
        #expect(seen.current.suffix(4) == ["cached p3,p2", "server p3,p2", "cached ", "server p1"])
        let whole = ConversationRequest.ConversationRequestBuilder(limit: 10).build(client: alice)
        try await run(whole)
        #expect(seen.current.suffix(2) == ["cached p3,p2,p1", "server p3,p2,p1"])

        // Offline: the cached list, then the offline error.
        server.stop()
        do {
            try await run(ConversationRequest.ConversationRequestBuilder(limit: 10).build(client: alice))
            Issue.record("no offline error")
        } catch let error as ChatException {
            #expect(error.errorCode == ChatException.internetUnavailable)
        }
        #expect(seen.current.last == "cached p3,p2,p1")
    }

    @Test func singleLookupsFireTheCachedPhaseOnlyOnAHit() async throws {
        let (server, alice, id) = try await aliceWithAMessageFromBob()
        let details = Details()
        // A miss online: the server phase alone.
        alice.getMessageDetails(id, listener: details)
        #expect(await details.log.next() == .server([id]))
        alice.getConversation(conversationWith: "bob", conversationType: .user, listener: details)
        #expect(await details.log.next() == .server([id]))
        // Now cached: both phases.
        alice.getMessageDetails(id, listener: details)
        #expect(await details.log.next() == .cached([id]))
        #expect(await details.log.next() == .server([id]))
        alice.getConversation(conversationWith: "bob", conversationType: .user, listener: details)
        #expect(await details.log.next() == .cached([id]))
        #expect(await details.log.next() == .server([id]))
        // A server error reaches onError unchanged.
        alice.getMessageDetails(9_999, listener: details)
        #expect(await details.log.next() == .error("not_found"))
        // Offline: a hit gives the cached copy then the error; a miss only the error.
        server.stop()
        alice.getMessageDetails(id, listener: details)
        #expect(await details.log.next() == .cached([id]))
        #expect(await details.log.next() == .error(ChatException.internetUnavailable))
        alice.getMessageDetails(id + 1, listener: details)
        #expect(await details.log.next() == .error(ChatException.internetUnavailable))
    }

    @Test func aLookupListenerIsKeptAliveUntilItSettles() async throws {
        let (server, alice, id) = try await aliceWithAMessageFromBob()
        defer { withExtendedLifetime(server) {} }  // chatd runs until the test ends
        let log = PhaseLog()
        final class Transient: MessageDetailsListener {
            let log: PhaseLog
            init(_ log: PhaseLog) { self.log = log }
            func onCachedMessage(_ message: BaseMessage) { log.push(.cached([message.id])) }
            func onServerMessage(_ message: BaseMessage?) { log.push(.server([message?.id ?? 0])) }
            func onError(_ error: ChatException?) { log.push(.error(error?.errorCode ?? "")) }
        }
        alice.getMessageDetails(id, listener: Transient(log))  // nobody else holds it
        #expect(await log.next() == .server([id]))
    }

    @Test func theCacheSurvivesARestartOfTheSameUser() async throws {
        let server = try LiveChatd()
        let token = try await server.user("alice")
        let bobToken = try await server.user("bob")
        let ids = [
            try await server.send("one", from: bobToken, to: "alice"),
            try await server.send("two", from: bobToken, to: "alice")
        ]
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-test-\(UUID().uuidString)")
        let first = try makeClient(server, offline: offlineOn(), storage: storage)
        try await first.login(uid: "alice", authToken: token)
        let log = PhaseLog()
        try MessagesRequest.MessageRequestBuilder().set(uid: "bob").build(client: first)
            .fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        _ = await log.next()
        _ = await log.next()

        // The app restarts with no network: the same user's login is served from the cache.
        server.stop()
        let second = try makeClient(server, offline: offlineOn(), storage: storage)
        let me = try await second.login(uid: "alice", authToken: token)
        #expect(me.uid == "alice")
        try MessagesRequest.MessageRequestBuilder().set(uid: "bob").build(client: second)
            .fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached(ids))
        #expect(await log.next() == .error(ChatException.internetUnavailable))
        // A different token does not open the cache offline.
        let third = try makeClient(server, offline: offlineOn(), storage: storage)
        await #expect(throws: ChatException.self) { try await third.login(uid: "alice", authToken: "someone-else") }
    }

    @Test func logoutAUserSwitchAndARejectedTokenWipeTheCache() async throws {
        let server = try LiveChatd()
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-test-\(UUID().uuidString)")
        let appDirectory = storage.appendingPathComponent("test")
        func cached(_ uid: String) -> Bool {
            FileManager.default.fileExists(atPath: appDirectory.appendingPathComponent(uid).path)
        }

        let client = try makeClient(server, offline: offlineOn(), storage: storage)
        try await client.login(uid: "alice", authToken: aliceToken)
        #expect(cached("alice") && client.isOfflineEnabled())
        client.logout()
        #expect(!cached("alice"), "logout wipes")
        _ = await client.session.revocation?.value
        await #expect(throws: ChatException.self, "the logout revoked the token") {
            try await client.login(uid: "alice", authToken: aliceToken)
        }

        let aliceAgain = try await server.token("alice")
        try await client.login(uid: "alice", authToken: aliceAgain)
        // Another client of the same app on this device logs bob in: alice's cache goes.
        let other = try makeClient(server, offline: offlineOn(), storage: storage)
        try await other.login(uid: "bob", authToken: bobToken)
        #expect(!cached("alice") && cached("bob"), "a different user's login wipes")

        let queue = other.config.callbackQueue
        let recorder = Recorder(queue: queue)
        other.addConnectionListener("r", recorder)
        try await server.revoke(bobToken)
        _ = await recorder.next(where: { $0 == "disconnected" })
        for _ in 0..<1_000_000 where cached("bob") { await Task.yield() }
        #expect(!cached("bob") && other.getLoggedInUser() == nil, "a rejected token wipes")

        // A different user's login wipes other caches even when it keeps none itself.
        let third = try makeClient(server, offline: offlineOn(), storage: storage)
        try await third.login(uid: "alice", authToken: aliceAgain)
        #expect(cached("alice"))
        let onlineOnly = try makeClient(server, offline: OfflineConfig(), storage: storage)
        try await onlineOnly.login(uid: "bob", authToken: try await server.token("bob"))
        #expect(!onlineOnly.isOfflineEnabled() && !cached("alice") && !cached("bob"))
    }

    /// A cache that cannot take a server answer (read-only here, as a full disk would be) does
    /// not turn the answer into an error: the cached phase serves what it had, the server's
    /// phase follows.
    @Test func aCacheThatCannotWriteStillLetsTheServersAnswerThrough() async throws {
        let (server, alice, id) = try await aliceWithAMessageFromBob()
        defer { withExtendedLifetime(server) {} }  // chatd runs until the test ends
        let cache = try #require(alice.session.current?.cache)
        try cache.write { db, _ in try db.run("PRAGMA query_only = 1") }
        let log = PhaseLog()
        try MessagesRequest.MessageRequestBuilder().set(uid: "bob").build(client: alice)
            .fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached([]))
        #expect(await log.next() == .server([id]))
        var listed: [String] = []
        for try await phase in ConversationRequest.ConversationRequestBuilder().build(client: alice).next() {
            if case .server(let conversations) = phase { listed = conversations.map(\.conversationId) }
        }
        #expect(listed == ["alice~bob"])
        #expect(try cache.conversation(id: "alice~bob") == nil, "nothing was written")
    }

    @Test func twoClientsInOneProcessKeepTheirOwnCaches() async throws {
        let server = try LiveChatd()
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        let id = try await server.send("hi", from: bobToken, to: "alice")
        let alice = try makeClient(server, offline: offlineOn())
        let bob = try makeClient(server, offline: offlineOn())
        try await alice.login(uid: "alice", authToken: aliceToken)
        try await bob.login(uid: "bob", authToken: bobToken)
        let log = PhaseLog()
        try MessagesRequest.MessageRequestBuilder().set(uid: "bob").build(client: alice)
            .fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached([]))
        #expect(await log.next() == .server([id]))
        try MessagesRequest.MessageRequestBuilder().set(uid: "alice").build(client: bob)
            .fetchPrevious(onCachedMessages: log.cached, onServerMessages: log.server, onError: log.error)
        #expect(await log.next() == .cached([]), "bob's cache is his own")
        #expect(await log.next() == .server([id]))
    }

    @Test func anExpiredTokenWipesTheCache() async throws {
        let server = try LiveChatd()
        _ = try await server.user("alice")
        let token = try await server.token("alice", ttlSeconds: 60)
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-test-\(UUID().uuidString)")
        let client = try makeClient(server, offline: offlineOn(), storage: storage)
        let recorder = Recorder(queue: client.config.callbackQueue)
        client.addConnectionListener("r", recorder)
        try await client.login(uid: "alice", authToken: token)
        _ = await recorder.next(where: { $0 == "connected" })
        let directory = storage.appendingPathComponent("test/alice")
        #expect(FileManager.default.fileExists(atPath: directory.path))
        try await server.advanceClock(seconds: 120)  // chatd closes the socket: token expired
        _ = await recorder.next(where: { $0 == "disconnected" })
        for _ in 0..<1_000_000 where FileManager.default.fileExists(atPath: directory.path) { await Task.yield() }
        #expect(!FileManager.default.fileExists(atPath: directory.path) && client.getLoggedInUser() == nil)
    }
}
