import Foundation
import OfflineChatCache
import OfflineChatProtocol
import Testing

/// The cache's side of the catch-up sync: one page merged with its cursor, what is new and
/// what changed, and stretches that grow only when the replay proves it.
@Suite struct SyncMergeTests {
    let scope = CacheScope.conversation("a~b")

    func created(_ message: MessagePayload, seq: Int64) -> ChangePayload {
        ChangePayload(
            seq: seq, kind: .messageCreated, conversationId: message.conversationId, message: message,
            at: message.updatedAt)
    }

    func updated(_ message: MessagePayload, seq: Int64) -> ChangePayload {
        ChangePayload(
            seq: seq, kind: .messageUpdated, conversationId: message.conversationId, message: message,
            at: message.updatedAt)
    }

    @Test func aPageIsMergedWithItsCursorAndSortsNewFromChangedFromKnown() throws {
        let cache = try makeCache()
        #expect(try cache.syncPoint() == SyncPoint(cursor: nil, number: 0, serverTime: 0), "never synced")
        try cache.recordSyncHead(cursor: "c1.5", serverTime: 100)
        let start = try cache.syncPoint()
        #expect(start == SyncPoint(cursor: "c1.5", number: 1, serverTime: 100))
        try cache.storeLive(message(10))
        try cache.storeLive(message(11))
        let merge = try cache.applySyncPage(
            [
                created(message(10), seq: 6), created(message(12), seq: 7),
                updated(message(11, text: "edited", updatedAt: 500), seq: 8),
                updated(message(10, deleted: true), seq: 9)
            ],
            from: start, cursor: "c1.9", serverTime: 160)
        #expect(merge.new.map(\.id) == [12])
        #expect(merge.updated.map(\.id) == [11, 10], "10's deletion counts even at the same time (so do reactions)")
        #expect(try cache.message(id: 11)?.text == "edited" && cache.message(id: 12) != nil)
        #expect(try cache.syncPoint() == SyncPoint(cursor: "c1.9", number: 2, serverTime: 160))
        // A second sweep from the old point is refused: nothing is applied twice over a newer point.
        #expect(throws: SyncPointMoved.self) {
            try cache.applySyncPage([created(message(13), seq: 10)], from: start, cursor: "c1.10", serverTime: 170)
        }
        #expect(try cache.message(id: 13) == nil)
    }

    @Test func theLiveStreamMovesOnlyTheCursorAndAPageReadBeforeItStillApplies() throws {
        let cache = try makeCache()
        #expect(try cache.followLiveCursor("c1.3") == false, "no sync point yet: nothing to follow")
        #expect(try cache.syncPoint().cursor == nil)
        try cache.recordSyncHead(cursor: "c1.5", serverTime: 100)
        let start = try cache.syncPoint()
        try cache.storeLive(message(10))
        #expect(try cache.followLiveCursor("c1.6"))
        #expect(try cache.syncPoint() == SyncPoint(cursor: "c1.6", number: 1, serverTime: 100), "number and time stay")
        // A sweep that read from c1.5 before the live move: every change up to either cursor is stored.
        let merge = try cache.applySyncPage(
            [created(message(10), seq: 6), created(message(11), seq: 7)], from: start, cursor: "c1.7", serverTime: 110)
        #expect(merge.new.map(\.id) == [11] && merge.updated.isEmpty)
        #expect(try cache.syncPoint() == SyncPoint(cursor: "c1.7", number: 2, serverTime: 110))
        try cache.resetForRebuild()
        #expect(try cache.followLiveCursor("c1.8") == false, "after a rebuild the cold start comes first")
    }

    @Test func aStretchClosedAfterTheSyncPointGrowsOverTheReplay() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try cache.storePage(
            (10...12).map { message($0) }, scope: scope, anchor: .latest, limit: 30, complete: true,
            liveSince: cache.liveEpoch)
        try cache.closeOpenRanges()  // offline: messages 13… may be missed
        let point = try cache.syncPoint()
        // Back online: a live message opens a stretch of its own; the replay brings the rest.
        try cache.storeLive(message(20))
        #expect(try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [20], "the hole is not spanned yet")
        _ = try cache.applySyncPage(
            [created(message(15), seq: 2), created(message(16, in: "a~c"), seq: 3), created(message(20), seq: 4)],
            from: point, cursor: "c1.4", serverTime: 2)
        #expect(try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [10, 11, 12, 15, 20])
        #expect(try cache.ranges(scope).map { [$0.lo, $0.hi] } == [[0, 20]])
        #expect(try cache.ranges(scope).first?.open == true, "still live")
    }

    /// Two drops before a sweep could run (a node died, then the one the phone moved to): both
    /// stretches close proven at the same point, and the sweep that finally runs carries a
    /// message between them. The stretches join over it; before, only the newer one grew and
    /// the message between stayed outside every stretch (found by ClusterFailoverTests).
    @Test func aSweepJoinsEveryStretchClosedSinceItsPoint() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try cache.storePage(
            (10...12).map { message($0) }, scope: scope, anchor: .latest, limit: 30, complete: true,
            liveSince: cache.liveEpoch)
        try cache.closeOpenRanges()  // the first drop: 13… may be missed
        let point = try cache.syncPoint()
        try cache.storeLive(message(15))  // back on another node
        try cache.closeOpenRanges()  // and that one dies before the sweep
        try cache.storeLive(message(17))
        #expect(try cache.ranges(scope).map { [$0.lo, $0.hi] } == [[0, 12], [15, 15], [17, 17]])
        _ = try cache.applySyncPage(
            [
                created(message(13), seq: 2), created(message(14, in: "a~c"), seq: 3), created(message(15), seq: 4),
                created(message(16), seq: 5)
            ], from: point, cursor: "c1.5", serverTime: 2)
        #expect(try cache.ranges(scope).map { [$0.lo, $0.hi] } == [[0, 17]], "13 and 16 joined them all")
        #expect(try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [10, 11, 12, 13, 15, 16, 17])
    }

    /// A stretch that starts after everything a page carried is not joined: what came between
    /// may be after the page's end.
    @Test func aStretchBeyondThePageStaysApart() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try cache.storePage(
            (10...12).map { message($0) }, scope: scope, anchor: .latest, limit: 30, complete: true,
            liveSince: cache.liveEpoch)
        try cache.closeOpenRanges()
        let point = try cache.syncPoint()
        try cache.storeLive(message(20))
        try cache.closeOpenRanges()
        _ = try cache.applySyncPage([created(message(13), seq: 2)], from: point, cursor: "c1.2", serverTime: 2)
        #expect(
            try cache.ranges(scope).map { [$0.lo, $0.hi] } == [[0, 13], [20, 20]], "14…19 may come on the next page")
    }

    @Test func aStretchClosedBeforeTheSyncPointIsNotExtended() throws {
        let cache = try makeCache()
        try cache.storePage(
            (10...12).map { message($0) }, scope: scope, anchor: .latest, limit: 30, complete: true,
            liveSince: cache.liveEpoch)
        try cache.closeOpenRanges()  // closed before any sync point: what came between is unknown
        try cache.recordSyncHead(cursor: "c1.9", serverTime: 1)
        _ = try cache.applySyncPage(
            [created(message(15), seq: 10)], from: try cache.syncPoint(), cursor: "c1.10", serverTime: 2)
        #expect(try cache.ranges(scope).map { [$0.lo, $0.hi] } == [[0, 12], [15, 15]], "15 starts a stretch of its own")
        #expect(try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [15])
        #expect(
            try cache.cachedPage(scope, .before(15), limit: 30).isEmpty, "13 and 14 may exist: the hole is not spanned")
    }

    @Test func provenStretchesStayProvenAcrossPagesWithoutTheirConversation() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try cache.storePage(
            (10...12).map { message($0) }, scope: scope, anchor: .latest, limit: 30, complete: true,
            liveSince: cache.liveEpoch)
        try cache.closeOpenRanges()
        _ = try cache.applySyncPage(
            [created(message(14, in: "a~c"), seq: 2)], from: try cache.syncPoint(), cursor: "c1.2", serverTime: 2)
        _ = try cache.applySyncPage(
            [created(message(15), seq: 3)], from: try cache.syncPoint(), cursor: "c1.3", serverTime: 3)
        #expect(try cache.ranges(scope).map { [$0.lo, $0.hi] } == [[0, 15]])
    }

    @Test func removalFromAGroupOrItsDeletionDropsTheConversation() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try cache.storeLive(message(10, in: "group_g"))
        try cache.storeLive(message(11, in: "group_h"))
        var kick = message(12, in: "group_g")
        kick.category = .action
        kick.action = MemberActionPayload(guid: "g", action: .kicked, actor: "b", target: "a")
        let merge = try cache.applySyncPage(
            [
                ChangePayload(seq: 2, kind: .groupMember, conversationId: "group_g", message: kick, at: 1),
                ChangePayload(seq: 3, kind: .groupDeleted, conversationId: "group_h", at: 2)
            ],
            from: try cache.syncPoint(), cursor: "c1.3", serverTime: 2)
        #expect(merge.removedConversations == ["group_g", "group_h"])
        #expect(try cache.message(id: 10) == nil && cache.message(id: 11) == nil && cache.message(id: 12) == nil)
    }

    @Test func aRebuildKeepsQueuedMessagesAndStartsFromTheHeadAgain() throws {
        let cache = try makeCache()
        try cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try cache.storeLive(message(10))
        let request = SendMessageRequest(muid: "q1", receiver: "b", text: "queued")
        var queued = message(0, from: "a", text: "queued")
        queued.muid = "q1"
        _ = try cache.enqueue(request, showing: queued, maxPending: 10)
        try cache.resetForRebuild()
        #expect(try cache.message(id: 10) == nil)
        #expect(try cache.outboxItems().map(\.request.muid) == ["q1"])
        #expect(try cache.syncPoint().cursor == nil && cache.syncPoint().serverTime == 0)
    }
}
