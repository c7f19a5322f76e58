import ChatTesting
import Foundation
import OfflineChatCache
import Testing

@testable import OfflineChat

/// What a catch-up sync brings in is readable offline, through the public API: the messages
/// created after the sync point form a stretch the cached phase serves, and it stops at the
/// hole before them (against a live chatd; bob's network is a proxy the test switches off).
@Suite(.timeLimit(.minutes(3))) struct SyncedReadsLiveTests {
    let sync = SyncLiveTests()

    /// bob's history with alice as an app pages it with no network: the cached phase of each
    /// `fetchPrevious`, newest page first, until one comes back empty.
    func readOffline(_ world: SyncLiveTests.World, limit: Int = 100) async throws -> [[Int64]] {
        let request = try MessagesRequest.MessageRequestBuilder().set(uid: "alice").set(limit: limit).build(
            client: world.bob)
        var pages: [[Int64]] = []
        while true {
            var cached: [Int64]?
            var failure: String?
            do {
                for try await phase in request.previous() {
                    if case .cached(let page) = phase { cached = page.map(\.id) }
                }
            } catch let error as ChatException {
                failure = error.errorCode
            }
            #expect(failure == ChatException.internetUnavailable, "offline, the server phase fails")
            guard let page = cached, !page.isEmpty else { return pages }
            pages.append(page)
        }
    }

    func sendFromAlice(_ world: SyncLiveTests.World, _ count: Int, _ label: String) async throws -> [Int64] {
        var ids: [Int64] = []
        for index in 0..<count {
            ids.append(try await world.server.send("\(label) \(index)", from: world.aliceToken, to: "bob"))
        }
        return ids
    }

    /// bob offline while alice sends `count` messages, then back: the reconnect's sweep brings
    /// exactly them. Returns their ids.
    func missWhileAway(_ world: SyncLiveTests.World, _ count: Int, _ label: String) async throws -> [Int64] {
        await sync.goOffline(world)
        let missed = try await sendFromAlice(world, count, label)
        await sync.comeBack(world)
        #expect(await caughtUp(world).contains("messages \(count) caughtUp"))
        return missed
    }

    /// Sweeps until one finishes (the reconnect's), returning its events.
    func caughtUp(_ world: SyncLiveTests.World) async -> [String] {
        let sweep = await world.log.sweep()
        #expect(sweep.last == "finish reInstall=false", "\(sweep)")
        return sweep
    }

    /// The scenario: a conversation bob never opened, written to while he was away.
    @Test func aConversationNeverOpenedIsReadableOfflineAfterTheSync() async throws {
        let world = try await sync.world()
        let missed = try await missWhileAway(world, 3, "while away")
        // Still online: a live message continues the synced stretch (it reaches the live head).
        // A message elsewhere first, so that the ids are not adjacent (adjacent stretches join anyway).
        _ = try await world.server.send("elsewhere", from: world.aliceToken, to: "carol")
        let live = try await world.server.send("live", from: world.aliceToken, to: "bob")
        await sync.heardLive(world, live)
        await sync.goOffline(world)
        #expect(try await readOffline(world) == [missed + [live]])
    }

    /// bob's first login on this device (a cold start: nothing is replayed): each
    /// conversation's last message, as the list brought it, is readable offline, and only it.
    @Test func afterTheFirstSyncEachConversationsLastMessageIsReadableOffline() async throws {
        var sent: [Int64] = []
        let world = try await sync.world { server, alice in
            for index in 0..<3 { sent.append(try await server.send("before \(index)", from: alice, to: "bob")) }
        }
        await sync.goOffline(world)
        #expect(try await readOffline(world) == [[sent.last!]])
    }

    /// 20 messages from before bob's first login: only what the syncs brought is claimed (the
    /// first sync's conversation list brought the last of them, the catch-up the new ones).
    @Test func anOldConversationShowsExactlyWhatWasSyncedAndNothingBefore() async throws {
        var old: [Int64] = []
        let world = try await sync.world { server, alice in
            for index in 0..<20 { old.append(try await server.send("old \(index)", from: alice, to: "bob")) }
        }
        let missed = try await missWhileAway(world, 2, "new")
        await sync.goOffline(world)
        #expect(
            try await readOffline(world).reversed().flatMap { $0 } == [old.last!] + missed,
            "the 19 before the list's last message were never seen")
    }

    /// Opened online (a live stretch), then offline while alice writes: old + new, no hole.
    @Test func aConversationOpenedOnlineReadsOldAndNewWithoutAHole() async throws {
        var old: [Int64] = []
        let world = try await sync.world { server, alice in
            for index in 0..<5 { old.append(try await server.send("old \(index)", from: alice, to: "bob")) }
        }
        try await sync.read(world, "alice~bob")
        let missed = try await missWhileAway(world, 3, "new")
        await sync.goOffline(world)
        #expect(try await readOffline(world) == [old + missed])
    }

    /// 2,500 changes in three sweeps (the first two `.partial`), read offline page by page.
    @Test func aBacklogOf2500IsReadableOfflineAfterThreeSweeps() async throws {
        var offline = offlineOn()
        offline.maxMessagesPerConversation = 10_000
        let world = try await sync.world(offline: offline)
        await sync.goOffline(world)
        let backlog = try await sendConcurrently(world, 2_500)
        await sync.comeBack(world)
        #expect(await caughtUp(world).contains("messages 1000 partial"))
        for outcome in ["messages 1000 partial", "messages 500 caughtUp"] {
            world.clock.advance(by: SyncThrottle.cooldown)
            try await world.bob.forceSyncNow()
            #expect(await caughtUp(world).contains(outcome))
        }
        await sync.goOffline(world)
        let pages = try await readOffline(world)
        #expect(pages.count == 25 && pages.allSatisfy { $0.count == 100 })
        let read = pages.reversed().flatMap { $0 }
        #expect(read == backlog.sorted(), "read \(read.count) of \(backlog.count), in order: \(read == read.sorted())")
    }

    /// `maxMessagesPerConversation` trims the synced stretch's start with the messages.
    @Test func evictionTrimsTheSyncedStretch() async throws {
        var offline = offlineOn()
        offline.maxMessagesPerConversation = 4
        let world = try await sync.world(offline: offline)
        let missed = try await missWhileAway(world, 10, "while away")
        await sync.goOffline(world)
        #expect(try await readOffline(world, limit: 3) == [Array(missed.suffix(3)), [missed[6]]])
    }

    /// After a rebuild (the sync point expired while bob was away), the next catch-up's
    /// messages are readable offline again.
    @Test func afterARebuildWhatTheNextSyncBringsIsReadableOffline() async throws {
        let world = try await sync.world(chatd: ["--changelog-retention", "5"])
        await sync.goOffline(world)
        let expired = try await sendFromAlice(world, 12, "expired")
        await sync.comeBack(world)
        #expect(await world.log.sweep().contains("messages error cursor_expired"))
        #expect(await world.log.sweep().last == "finish reInstall=true", "the rebuild's cold start")
        let missed = try await missWhileAway(world, 2, "after the rebuild")
        await sync.goOffline(world)
        #expect(
            try await readOffline(world).reversed().flatMap { $0 } == [expired.last!] + missed,
            "the rebuild dropped the older ones; its conversation list brought the last, the sync the others")
    }

    func sendConcurrently(_ world: SyncLiveTests.World, _ count: Int) async throws -> [Int64] {
        try await withThrowingTaskGroup(of: [Int64].self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var ids: [Int64] = []
                    for index in stride(from: worker, to: count, by: 8) {
                        ids.append(try await world.server.send("backlog \(index)", from: world.aliceToken, to: "bob"))
                    }
                    return ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }
}
