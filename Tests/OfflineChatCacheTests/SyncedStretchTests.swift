import Foundation
import OfflineChatCache
import OfflineChatProtocol
import Testing

/// What a replay proves: every message created after the sync point it was read from is in
/// the page, so those messages form a stretch a cached page serves with no network, and it
/// stops at the hole before them.
@Suite struct SyncedStretchTests {
    let scope = CacheScope.conversation("a~b")

    func change(_ kind: ChangeKind, _ message: MessagePayload, seq: Int64) -> ChangePayload {
        ChangePayload(
            seq: seq, kind: kind, conversationId: message.conversationId, message: message, at: message.updatedAt)
    }

    /// Applies `changes` as one page from the current sync point.
    func sweep(_ cache: ChatCache, _ changes: [ChangePayload], liveSince: Int? = nil) throws {
        let cursor = "c1.\(changes.last?.seq ?? 0)"
        _ = try cache.applySyncPage(
            changes, from: try cache.syncPoint(), cursor: cursor, serverTime: 1, liveSince: liveSince)
    }

    func spans(_ cache: ChatCache, _ scope: CacheScope) throws -> [[Int64]] {
        try cache.ranges(scope).map { [$0.lo, $0.hi] }
    }

    @Test func messagesCreatedAfterTheSyncPointAreReadableAndNothingBeforeThemIsClaimed() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        // 5 is older than the sync point (an edit brings it); 15…17 were created after it.
        try sweep(
            cache,
            [
                change(.messageUpdated, message(5, text: "edited", updatedAt: 900), seq: 2),
                change(.messageCreated, message(15), seq: 3), change(.messageCreated, message(16), seq: 4),
                change(.messageUpdated, message(15, text: "edited too", updatedAt: 901), seq: 5),
                change(.messageCreated, message(17), seq: 6)
            ])
        #expect(try spans(cache, scope) == [[15, 17]])
        #expect(try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [15, 16, 17])
        #expect(try cache.cachedPage(scope, .latest, limit: 30).first?.text == "edited too")
        #expect(
            try cache.cachedPage(scope, .before(15), limit: 30).isEmpty,
            "5 is stored, but what lies around it is unknown")
        #expect(try cache.message(id: 5)?.text == "edited")
    }

    @Test func onlyUpdatesProveNothing() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try sweep(
            cache,
            [
                change(.messageUpdated, message(5, updatedAt: 900), seq: 2),
                change(.reactionAdded, message(6, updatedAt: 901), seq: 3)
            ])
        #expect(try spans(cache, scope).isEmpty)
        #expect(try cache.cachedPage(scope, .latest, limit: 30).isEmpty)
    }

    @Test func partialSweepsChainIntoOneStretch() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try sweep(
            cache,
            [change(.messageCreated, message(15), seq: 2), change(.messageCreated, message(16, in: "a~c"), seq: 3)])
        try sweep(cache, [change(.messageCreated, message(17, in: "a~c"), seq: 4)])  // nothing for a~b: still proven
        try sweep(cache, [change(.messageCreated, message(20), seq: 5), change(.messageCreated, message(21), seq: 6)])
        #expect(try spans(cache, scope) == [[15, 21]])
        #expect(try spans(cache, .conversation("a~c")) == [[16, 17]])
    }

    @Test func threadsGetTheirOwnSyncedStretch() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        // 8 is the thread's parent, from before the sync point; its replies came after.
        try sweep(
            cache,
            [
                change(.messageCreated, message(15, parent: 8), seq: 2), change(.messageCreated, message(16), seq: 3),
                change(.messageCreated, message(17, parent: 8), seq: 4)
            ])
        #expect(try cache.cachedPage(.thread(parentId: 8), .latest, limit: 30).map(\.id) == [15, 17])
        #expect(try spans(cache, scope) == [[15, 17]])
    }

    @Test func aStretchThatReachedTheSyncPointJoinsTheSyncedOneWithoutAHole() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try cache.storePage(
            (10...12).map { message($0) }, scope: scope, anchor: .latest, limit: 30, complete: true,
            liveSince: cache.liveEpoch)
        try cache.closeOpenRanges()
        // An older page read online meets the proven stretch: it still reaches the sync point.
        try cache.storePage(
            (7...9).map { message($0) }, scope: scope, anchor: .before(10), limit: 3, complete: true, liveSince: nil)
        try sweep(cache, [change(.messageCreated, message(15), seq: 2)])
        #expect(try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [7, 8, 9, 10, 11, 12, 15])
    }

    @Test func aConversationDroppedAndRejoinedInOnePageClaimsOnlyWhatCameAfterTheRejoin() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        func action(_ id: Int64, _ kind: MemberActionPayload.Action) -> MessagePayload {
            var action = message(id, in: "group_g")
            action.category = .action
            action.action = MemberActionPayload(guid: "g", action: kind, actor: "b", target: "a")
            return action
        }
        // 16 and 17 were written while a was out: not in a's changelog, but readable after the rejoin.
        try sweep(
            cache,
            [
                change(.messageCreated, message(15, in: "group_g"), seq: 2),
                change(.groupMember, action(16, .kicked), seq: 3),
                change(.groupMember, action(18, .added), seq: 4),
                change(.messageCreated, message(19, in: "group_g"), seq: 5)
            ])
        #expect(try spans(cache, .conversation("group_g")) == [[18, 19]])
        #expect(try cache.message(id: 15) == nil)
    }

    @Test func aLastPageOnALiveConnectionReachesTheLiveHead() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        let epoch = cache.liveEpoch
        try cache.storeLive(message(30))  // the stream's first message of a~b since the hello
        try sweep(
            cache,
            [change(.messageCreated, message(15), seq: 2), change(.messageCreated, message(16, in: "a~c"), seq: 3)],
            liveSince: epoch)
        #expect(
            try cache.ranges(scope).map { [$0.lo, $0.hi, $0.open ? 1 : 0] } == [[15, 30, 1]],
            "joined with the live stretch")
        try cache.storeLive(message(31, in: "a~c"))
        #expect(try cache.cachedPage(.conversation("a~c"), .latest, limit: 30).map(\.id) == [16, 31])
        // Offline now: the stretches close and the next replay extends them.
        try cache.closeOpenRanges()
        try sweep(cache, [change(.messageCreated, message(40), seq: 4)])
        #expect(try spans(cache, scope) == [[15, 40]])
    }

    @Test func aConnectionLostBeforeTheMergeLeavesTheSyncedStretchClosed() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        let epoch = cache.liveEpoch
        try cache.closeOpenRanges()
        try sweep(cache, [change(.messageCreated, message(15), seq: 2)], liveSince: epoch)
        #expect(try cache.ranges(scope).map(\.open) == [false])
        try cache.storeLive(message(30))  // a new connection's message: the hole before it stays
        #expect(try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [30])
    }

    @Test func evictionTrimsTheSyncedStretchsStart() throws {
        let cache = try LimitTests().makeCache(CacheLimits(maxMessagesPerConversation: 3))
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try sweep(cache, (15...20).map { change(.messageCreated, message($0), seq: $0) })
        #expect(try spans(cache, scope) == [[18, 20]])
        #expect(try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [18, 19, 20])
        try sweep(cache, [change(.messageCreated, message(25), seq: 21)])
        #expect(
            try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [19, 20, 25], "the next sweep still joins it")
    }

    /// The stream removed the conversation after the page was read (a kick), then brought it
    /// back: the page's messages must not join what the stream stores after the return.
    @Test func aConversationRemovedAfterThePageWasReadDoesNotReachTheLiveHead() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        let epoch = cache.liveEpoch
        try cache.removeConversation("group_g")  // live: kicked; 101…104 are written while out
        try sweep(cache, [change(.messageCreated, message(100, in: "group_g"), seq: 2)], liveSince: epoch)
        try cache.storeLive(message(105, in: "group_g"))  // added back
        #expect(try cache.cachedPage(.conversation("group_g"), .latest, limit: 30).map(\.id) == [105])
        #expect(try cache.cachedPage(.conversation("group_g"), .before(105), limit: 30).isEmpty, "no span over 101…104")
    }

    /// Eviction is a removal too: what the stream stored since the page was read may be gone.
    @Test func aConversationEvictedAfterThePageWasReadDoesNotReachTheLiveHead() throws {
        let cache = try LimitTests().makeCache(CacheLimits(maxConversations: 1))
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        let epoch = cache.liveEpoch
        try cache.storeLive(message(110))
        try cache.storeLive(message(111, in: "a~c"))  // evicts a~b with 110
        try cache.storeLive(message(113))
        try sweep(cache, (100...105).map { change(.messageCreated, message($0), seq: $0) }, liveSince: epoch)
        #expect(
            try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [113], "110 is gone: no span from 105 to 113")
    }
}
