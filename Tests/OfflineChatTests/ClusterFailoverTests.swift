import ChatTesting
import Foundation
import OfflineChatCache
import Testing

@testable import OfflineChat

/// SIGKILL of a chatd node while SDK clients send and receive through HAProxy: whatever the
/// moment, every queued message reaches the server exactly once and both clients' caches end
/// equal to the server. Runs with `make test` on a throwaway PostgreSQL (`scripts/with-postgres.sh`);
/// these are real processes on a real clock, so the clients' timings are shortened, not faked.
@Suite(.enabled(if: LiveCluster.available), .timeLimit(.minutes(10)))
struct ClusterFailoverTests {
    /// What both clients' callbacks said, awaitable.
    final class Tally: @unchecked Sendable {  // every field under `lock`
        private let lock = NSLock()
        /// Texts whose send was acknowledged.
        private(set) var acknowledged = Set<String>()
        private(set) var errors: [String] = []
        /// Realtime connections lost (a kill that hit a node holding a phone's socket).
        var disconnects = 0
        var syncErrors: [String] = []
        /// Sweeps finished, by phone.
        var syncs: [String: Int] = [:]
        /// Sends made while the phone was offline: queued, not failed (`ERROR_INTERNET_UNAVAILABLE`).
        private(set) var queuedOffline = 0
        /// By listener: ids of messages from the other user, as heard (repeats kept).
        private(set) var heard: [String: [Int64]] = [:]
        private var waiters: [(id: UUID, test: (Tally) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []

        /// Changes (or reads) the tally under its lock, then wakes the waiters whose test now holds.
        @discardableResult
        func update<T>(_ change: (Tally) -> T) -> T {
            let (result, ready) = lock.withLock { () -> (T, [CheckedContinuation<Bool, Never>]) in
                let result = change(self)
                let ready = waiters.filter { $0.test(self) }.map(\.continuation)
                waiters.removeAll { $0.test(self) }
                return (result, ready)
            }
            ready.forEach { $0.resume(returning: true) }
            return result
        }

        /// Returns true once `test` holds (checked after every update), false after `seconds`
        /// without it (the test then says what it saw instead of hanging).
        func until(seconds: Double = 60, _ test: @escaping (Tally) -> Bool) async -> Bool {
            let id = UUID()
            return await withCheckedContinuation { continuation in
                let now = lock.withLock { () -> Bool in
                    if test(self) { return true }
                    waiters.append((id, test, continuation))
                    return false
                }
                if now { return continuation.resume(returning: true) }
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                    let late = lock.withLock { () -> CheckedContinuation<Bool, Never>? in
                        defer { waiters.removeAll { $0.id == id } }
                        return waiters.first { $0.id == id }?.continuation
                    }
                    late?.resume(returning: false)
                }
            }
        }

        func acknowledge(_ text: String) { update { $0.acknowledged.insert(text) } }
        func fail(_ error: ChatException) {
            if error.errorCode == ChatException.internetUnavailable {
                update { $0.queuedOffline += 1 }
            } else {
                update { $0.errors.append("\(error.errorCode): \(error.errorDescription)") }
            }
        }
        func hear(_ id: Int64, by uid: String) { update { $0.heard[uid, default: []].append(id) } }
        var snapshot: (acknowledged: Int, errors: [String], heard: [String: [Int64]]) {
            lock.withLock { (acknowledged.count, errors, heard) }
        }
    }

    /// Hears the other user's new messages.
    final class Ears: MessageListener, SyncListener, ConnectionListener, ConversationListener, @unchecked Sendable {
        let tally: Tally
        let uid: String
        init(_ tally: Tally, uid: String) { (self.tally, self.uid) = (tally, uid) }
        func onTextMessageReceived(_ message: TextMessage) {
            if message.senderUid != uid { tally.hear(message.id, by: uid) }
        }
        /// A finished sweep may have proven the cache whole: waiters look again.
        func onMessageSyncCompleted(_ messages: [BaseMessage], _ outcome: SyncOutcome) { tally.update { _ in } }
        func onDisconnected() { tally.update { $0.disconnects += 1 } }
        func onSyncServerFinish(reInstall: Bool) { tally.update { $0.syncs[self.uid, default: 0] += 1 } }
        func onMessageSyncError(_ error: ChatException) {
            tally.update { $0.syncErrors.append("\(uid): \(error.errorCode) \(error.errorDescription)") }
        }
    }

    struct Phone {
        let uid: String
        let client: ChatClient
        let tally: Tally
        /// The SDK holds listeners weakly.
        let ears: Ears
    }

    func phone(
        _ uid: String, hearing peer: String, token: String, cluster: LiveCluster, tally: Tally
    ) async throws -> Phone {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-cluster-\(UUID().uuidString)")
        var config = ChatConfig(
            appID: "test", server: cluster.url, storageDirectory: storage, offline: offlineOn(),
            callbackQueue: DispatchQueue(label: "callbacks-\(uid)"), clock: SystemClock(),
            logger: StandardErrorLogger(minimumLevel: .error))
        config.connectionSettleDelay = 100
        config.reconnectBaseDelay = 50
        config.reconnectMaxDelay = 400
        config.requestTimeout = 10
        let client = try ChatClient(config: config)
        let ears = Ears(tally, uid: uid)
        client.addMessageListener("ears", ears)
        client.addSyncListener("ears", ears)
        client.addConnectionListener("ears", ears)
        client.addConversationListener("ears", ears)
        let connection = Recorder(queue: config.callbackQueue)
        client.addConnectionListener("c", connection)
        _ = try await client.login(uid: uid, authToken: token)
        _ = await connection.next(where: { $0 == "connected" })
        // The first sync done: kills come to a phone that knows where to resume. (One that
        // dies before has no sync point; its first sync records the head and, as a first sync
        // does, replays nothing: messages lost in flight before it are history, fetched when
        // the conversation is read, not on the received callbacks.)
        #expect(await tally.until { $0.syncs[uid, default: 0] >= 1 }, "\(uid)'s first sync")
        // Open the conversation once, so what follows extends a stretch the cache has proven.
        let builder = MessagesRequest.MessageRequestBuilder().set(limit: 100).set(uid: peer)
        for try await _ in try builder.build(client: client).previous() {}
        return Phone(uid: uid, client: client, tally: tally, ears: ears)
    }

    func send(_ text: String, from phone: Phone, to peer: String) {
        let tally = phone.tally
        phone.client.sendTextMessage(
            message: TextMessage(receiverUid: peer, text: text, receiverType: .user),
            onMessageSent: { _ in tally.acknowledge(text) }, onError: tally.fail)
    }

    @Test func killingANodeAtRandomMomentsLosesNothingAndDuplicatesNothing() async throws {
        let cluster = try LiveCluster(nodes: Int(ProcessInfo.processInfo.environment["CLUSTER_NODES"] ?? "") ?? 3)
        let aliceToken = try await cluster.nodes[0].user("alice")
        let bobToken = try await cluster.nodes[0].user("bob")
        _ = try await cluster.nodes[0].send("hello", from: aliceToken, to: "bob")
        let tally = Tally()
        let alice = try await phone("alice", hearing: "bob", token: aliceToken, cluster: cluster, tally: tally)
        let bob = try await phone("bob", hearing: "alice", token: bobToken, cluster: cluster, tally: tally)

        // 80 messages and the first one: one page of the server's history and of the cache.
        let rounds = min(20, Int(ProcessInfo.processInfo.environment["CLUSTER_KILLS"] ?? "") ?? 20)
        let (fromAlice, fromBob) = (2, 2)
        var victims: [Int] = []
        for round in 0..<rounds {
            // Each round queues four messages, then kills a random node after a random number of
            // them were acknowledged (none to all), and starts it again.
            let acknowledgedBefore = tally.snapshot.acknowledged
            let killAfter = Int.random(in: 0...(fromAlice + fromBob))
            for index in 0..<max(fromAlice, fromBob) {
                if index < fromAlice { send("r\(round) alice \(index)", from: alice, to: "bob") }
                if index < fromBob { send("r\(round) bob \(index)", from: bob, to: "alice") }
            }
            #expect(
                await tally.until { $0.acknowledged.count >= acknowledgedBefore + killAfter },
                "round \(round): \(tally.snapshot)")
            let victim = Int.random(in: 0..<cluster.nodes.count)
            victims.append(victim)
            cluster.nodes[victim].kill()
            try cluster.nodes[victim].restart()
        }

        // Everything queued is acknowledged, and each phone heard every message of the other.
        let settled = await tally.until {
            $0.acknowledged.count == rounds * (fromAlice + fromBob) || !$0.errors.isEmpty
        }
        #expect(
            settled,
            "every send answered: \(tally.snapshot), pending alice \(alice.client.getPendingMessages().compactMap { ($0 as? TextMessage)?.text }), bob \(bob.client.getPendingMessages().compactMap { ($0 as? TextMessage)?.text })"
        )
        let errors = tally.snapshot.errors
        let disconnects = tally.update { $0.disconnects }
        #expect(
            disconnects >= rounds / 4, "the kills cut the phones' sockets (\(disconnects) times in \(rounds) kills)")
        #expect(errors.isEmpty, "no send failed: \(errors)")
        let heardAll = await tally.until {
            Set($0.heard["alice", default: []]).count == rounds * fromBob
                && Set($0.heard["bob", default: []]).count == rounds * fromAlice
        }
        #expect(
            heardAll,
            "each heard the other's messages: \(tally.snapshot.heard.mapValues { Set($0).count }); sync errors \(tally.update { $0.syncErrors })"
        )
        for (uid, heard) in tally.snapshot.heard {
            #expect(heard.count == Set(heard).count, "\(uid) heard each message once")
        }

        // The server holds each message exactly once; both caches hold what the server holds.
        let (status, data) = try await cluster.nodes[0].request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages?limit=100",
            token: aliceToken)
        #expect(status == 200)
        let onServer = try JSONDecoder().decode([MessagePayload].self, from: data)
        let texts = onServer.compactMap(\.text).filter { $0 != "hello" }
        #expect(
            texts.count == rounds * (fromAlice + fromBob) && Set(texts).count == texts.count,
            "each queued message once (\(texts.count) of \(rounds * (fromAlice + fromBob))), kills on nodes \(victims)")
        // Each phone's cache holds every message as the server does, row by row.
        for phone in [alice, bob] {
            let cache = try #require(phone.client.session.current?.cache)
            for message in onServer {
                #expect(
                    try cache.message(id: message.id) == MessageRowView.asCached(message),
                    "\(phone.uid)'s cache has message \(message.id) as the server")
            }
        }
        // And, once the sweep after its last reconnect ran, as one proven stretch: an offline
        // read serves the whole conversation. (Stretches closed by two drops before a sweep
        // used to stay apart: `ChatCache.extendProven`.)
        for phone in [alice, bob] {
            let cache = try #require(phone.client.session.current?.cache)
            let expected = onServer.map(MessageRowView.asCached)
            let whole = await tally.until(seconds: 10) { _ in
                (try? cache.cachedPage(.conversation("alice~bob"), .latest, limit: 100)) == expected
            }
            let stretches = try cache.ranges(.conversation("alice~bob"))
            #expect(whole, "\(phone.uid)'s cache serves the whole conversation offline: stretches \(stretches)")
        }
        #expect(alice.client.getPendingMessages().isEmpty && bob.client.getPendingMessages().isEmpty)
    }
}
