import ChatTesting
import Foundation
import OfflineChat
import OfflineChatCache
import Testing

/// Kill -9 during the catch-up sync at random points, the merge transaction included: after
/// restarts and syncs, the cache equals the server and holds nothing twice. The client is
/// `outbox-crash-probe sync`, a separate process.
///
/// One cold-started cache is copied for every run; while that client was away, three peers
/// sent 1,200 messages and edited, deleted and got reactions on some (two changelog pages).
/// Each run kills the client at a random time between its message phase's start and the
/// first page's end as measured on a calibration run (the fault injection's timing, not a
/// wait), then restarts it until a sync reports `caughtUp`.
@Suite(.timeLimit(.minutes(10))) struct SyncCrashTests {
    static let peers = ["p0", "p1", "p2"]

    @Test func killingTheClientDuringTheSyncLeavesACacheThatCatchesUpExactly() async throws {
        let server = try LiveChatd()
        let bobToken = try await server.user("bob")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sync-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let snapshot = root.appendingPathComponent("snapshot")
        let coldStart = await Probe.run(
            ["sync", server.url.absoluteString, snapshot.path, bobToken, "bob"], killAfterLines: nil)
        #expect(coldStart.lines.contains("finish") && coldStart.lines.last == "done", "\(coldStart.lines)")

        try await makeBacklog(server, bobToken: bobToken)
        let expected = try await allMessages(server, bobToken: bobToken)
        #expect(expected.count == 1_200)
        let (_, headData) = try await server.request(
            "GET", "\(Endpoints.changes)?cursor=&groupLogs=true", token: bobToken)
        let head = try JSONDecoder().decode(ChangelogPage.self, from: headData).cursor

        // How long the first page takes here, from the message phase's start to its end.
        let calibration = root.appendingPathComponent("calibration")
        try FileManager.default.copyItem(at: snapshot, to: calibration)
        let timed = await Probe.run(
            ["sync", server.url.absoluteString, calibration.path, bobToken, "bob"], killAfterLines: nil)
        var window = try #require(Self.firstPage(timed), "\(timed.lines)")

        let iterations = Int(ProcessInfo.processInfo.environment["CRASH_ITERATIONS"] ?? "") ?? 50
        var killedBeforeTheEnd = 0
        for iteration in 0..<iterations {
            let storage = root.appendingPathComponent("run-\(iteration)")
            try FileManager.default.copyItem(at: snapshot, to: storage)
            let arguments = ["sync", server.url.absoluteString, storage.path, bobToken, "bob"]
            // Lines: start, progress 0, progress 30, messages started: then the fetch and the merge.
            let delay = UInt32.random(in: 0...window)
            let killed = await Probe.run(arguments, killAfterLines: 4, delayMicroseconds: delay)
            if !killed.lines.contains("done") {
                killedBeforeTheEnd += 1
            } else if let took = Self.firstPage(killed) {
                // Finished before the kill: the calibration ran on a busier machine. Narrow the window.
                window = min(window, took)
            }
            var runs: [[String]] = []
            while runs.count < 5 && !(runs.last ?? []).contains(where: { $0.hasSuffix("caughtUp") }) {
                runs.append(await Probe.run(arguments, killAfterLines: nil).lines)
            }
            #expect(runs.last?.contains { $0.hasSuffix("caughtUp") } == true, "iteration \(iteration): \(runs)")

            let cache = try ChatCache(
                directory: storage.appendingPathComponent("crash-probe/bob"), uid: "bob", clock: { 0 })
            // The cache reads a reply count of 0 back as none.
            let mismatched = try expected.filter {
                var cached = $0
                if cached.replyCount == 0 { cached.replyCount = nil }
                return try cache.message(id: $0.id) != cached
            }.map(\.id)
            #expect(
                mismatched.isEmpty,
                "iteration \(iteration), killed \(delay) µs after the message phase began: \(mismatched.prefix(10))")
            #expect(try cache.syncPoint().cursor == head, "iteration \(iteration): caught up to the head")
            cache.close()
            try? FileManager.default.removeItem(at: storage)
        }
        #expect(
            killedBeforeTheEnd >= iterations / 2,
            "most kills land inside the sync (\(killedBeforeTheEnd) of \(iterations))")
    }

    /// Microseconds from the message phase's start to the first page's end in a run that got
    /// that far (at least 1 ms).
    static func firstPage(_ run: Probe.Result) -> UInt32? {
        guard let merged = run.lines.firstIndex(where: { $0.hasPrefix("messages ") && $0 != "messages started" }) else {
            return nil
        }
        return UInt32(max(1_000, (run.times[merged] - run.times[3]) / 1_000))
    }

    /// 1,200 messages from three peers, 120 edits, 60 deletions, 60 reactions by bob.
    func makeBacklog(_ server: LiveChatd, bobToken: String) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for peer in Self.peers {
                group.addTask {
                    let token = try await server.user(peer)
                    var ids: [Int64] = []
                    for index in 0..<400 {
                        ids.append(try await server.send("\(peer) \(index)", from: token, to: "bob"))
                    }
                    for id in ids.prefix(40) {
                        _ = try await server.request(
                            "PATCH", "\(Endpoints.messages)/\(id)", token: token,
                            json: EditMessageRequest(text: "edited"))
                    }
                    for id in ids.suffix(20) {
                        _ = try await server.request("DELETE", "\(Endpoints.messages)/\(id)", token: token)
                    }
                    for id in ids[100..<120] {
                        _ = try await server.request(
                            "POST", "\(Endpoints.messages)/\(id)/reactions", token: bobToken,
                            json: AddReactionRequest(reaction: "ok"))
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Every message of bob's conversations with the peers, as the server shows them now.
    func allMessages(_ server: LiveChatd, bobToken: String) async throws -> [MessagePayload] {
        var all: [MessagePayload] = []
        for peer in Self.peers {
            var after: Int64 = 0
            while true {
                let path =
                    "\(Endpoints.conversations)/\(ConversationPayload.directID(peer, "bob"))/messages?limit=100&after=\(after)"
                let (_, data) = try await server.request("GET", path, token: bobToken)
                let page = try JSONDecoder().decode([MessagePayload].self, from: data)
                all += page
                guard let last = page.last, page.count == 100 else { break }
                after = last.id
            }
        }
        return all
    }
}
