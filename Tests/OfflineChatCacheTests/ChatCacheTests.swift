import Foundation
import OfflineChatCache
import OfflineChatProtocol
import OfflineChatSQLite
import Testing

func message(
    _ id: Int64, in conversation: String = "a~b", from sender: String = "b", text: String? = nil,
    parent: Int64? = nil, updatedAt: Int64? = nil, deleted: Bool = false
) -> MessagePayload {
    MessagePayload(
        id: id, muid: "m\(id)", conversationId: conversation, sender: sender, receiver: "a", receiverType: .user,
        category: .message, type: "text", text: text ?? "#\(id)", attachment: nil, customData: nil, metadata: nil,
        sentAt: id * 10, updatedAt: updatedAt ?? id * 10, editedAt: nil, deletedAt: deleted ? id * 10 : nil,
        parentMessageId: parent)
}

func makeCache() throws -> ChatCache {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "cache-test-\(UUID().uuidString)/test/a")
    return try ChatCache(directory: directory, uid: "a", clock: { 1_000 })
}

@Suite struct MessageRangeTests {
    let scope = CacheScope.conversation("a~b")

    @Test func aLatestPageIsServedBackFromTheCache() throws {
        let cache = try makeCache()
        #expect(try cache.cachedPage(scope, .latest, limit: 5).isEmpty, "nothing known yet")
        try cache.storePage(
            (10...14).map { message($0) }, scope: scope, anchor: .latest, limit: 5, complete: true,
            liveSince: cache.liveEpoch)
        #expect(try cache.cachedPage(scope, .latest, limit: 5).map(\.id) == [10, 11, 12, 13, 14])
        #expect(try cache.cachedPage(scope, .latest, limit: 2).map(\.id) == [13, 14])
        #expect(try cache.cachedPage(scope, .before(12), limit: 5).map(\.id) == [10, 11])
        #expect(try cache.cachedPage(scope, .before(10), limit: 5).isEmpty, "older history is not known")
        #expect(try cache.cachedPage(scope, .after(11), limit: 2).map(\.id) == [12, 13])
        #expect(try cache.ranges(scope).map { [$0.lo, $0.hi] } == [[10, 14]])
    }

    @Test func aCachedPageNeverSpansAHole() throws {
        let cache = try makeCache()
        try cache.storePage(
            (10...14).map { message($0) }, scope: scope, anchor: .latest, limit: 5, complete: true,
            liveSince: cache.liveEpoch)
        try cache.storeLive(message(15))
        #expect(
            try cache.cachedPage(scope, .latest, limit: 10).map(\.id) == [10, 11, 12, 13, 14, 15],
            "live messages extend the open stretch")
        // Offline for a while: whatever happened meanwhile is unknown.
        try cache.closeOpenRanges()
        try cache.storeLive(message(30))
        #expect(try cache.cachedPage(scope, .latest, limit: 10).map(\.id) == [30], "the cached page stops at the hole")
        #expect(try cache.cachedPage(scope, .before(30), limit: 10).isEmpty)
        #expect(try cache.cachedPage(scope, .before(15), limit: 10).map(\.id) == [10, 11, 12, 13, 14])
        // The server fills the hole: one stretch again.
        try cache.storePage(
            [message(16), message(22)], scope: scope, anchor: .before(30), limit: 2, complete: true,
            liveSince: cache.liveEpoch)
        #expect(try cache.ranges(scope).map { [$0.lo, $0.hi] } == [[10, 30]], "16…29 touches both neighbours")
        #expect(try cache.cachedPage(scope, .latest, limit: 100).map(\.id) == [10, 11, 12, 13, 14, 15, 16, 22, 30])
    }

    @Test func aShortPageReachesTheStartOfHistory() throws {
        let cache = try makeCache()
        try cache.storePage(
            [message(3), message(7)], scope: scope, anchor: .latest, limit: 30, complete: true, liveSince: nil)
        #expect(try cache.ranges(scope).map { [$0.lo, $0.hi] } == [[0, 7]])
        #expect(try cache.cachedPage(scope, .before(3), limit: 5).isEmpty)
    }

    @Test func aServerPageReplacesItsSlice() throws {
        let cache = try makeCache()
        try cache.storePage(
            (10...14).map { message($0) }, scope: scope, anchor: .latest, limit: 5, complete: true, liveSince: nil)
        try cache.storePage(
            [10, 11, 13, 14, 15].map { message($0) }, scope: scope, anchor: .latest, limit: 5, complete: true,
            liveSince: nil)
        #expect(try cache.cachedPage(scope, .latest, limit: 10).map(\.id) == [10, 11, 13, 14, 15])
        #expect(try cache.message(id: 12) == nil)
    }

    @Test func filteredServerPagesStoreMessagesButProveNothing() throws {
        let cache = try makeCache()
        try cache.storePage(
            [message(5), message(9)], scope: scope, anchor: .latest, limit: 30, complete: false,
            liveSince: cache.liveEpoch)
        #expect(try cache.ranges(scope).isEmpty)
        #expect(try cache.message(id: 9)?.text == "#9")
        #expect(try cache.cachedPage(scope, .latest, limit: 5).isEmpty)
    }

    @Test func cacheFiltersApplyInsideTheStretch() throws {
        let cache = try makeCache()
        let page = [message(1), message(2, parent: 1), message(3, deleted: true), message(4)]
        try cache.storePage(page, scope: scope, anchor: .latest, limit: 30, complete: true, liveSince: nil)
        var filter = CachedMessageFilter()
        filter.hideReplies = true
        filter.hideDeleted = true
        #expect(try cache.cachedPage(scope, .latest, limit: 30, filter: filter).map(\.id) == [1, 4])
        #expect(try cache.cachedPage(scope, .latest, limit: 1, filter: filter).map(\.id) == [4])
        #expect(try cache.cachedPage(scope, .before(4), limit: 1, filter: filter).map(\.id) == [1])
    }

    @Test func theNewerStateOfAMessageWins() throws {
        let cache = try makeCache()
        try cache.storeUpdates([message(1, text: "new", updatedAt: 50)])
        try cache.storeUpdates([message(1, text: "old", updatedAt: 20)])
        #expect(try cache.message(id: 1)?.text == "new")
        try cache.storeUpdates([message(1, text: "newer", updatedAt: 60)])
        #expect(try cache.message(id: 1)?.text == "newer")
    }

    @Test func threadsHaveTheirOwnStretches() throws {
        let cache = try makeCache()
        let thread = CacheScope.thread(parentId: 1)
        try cache.storePage(
            [message(2, parent: 1), message(4, parent: 1)], scope: thread, anchor: .latest, limit: 10, complete: true,
            liveSince: cache.liveEpoch)
        try cache.storeLive(message(6, parent: 1))
        #expect(try cache.cachedPage(thread, .latest, limit: 10).map(\.id) == [2, 4, 6])
    }
}

@Suite struct CacheFileTests {
    @Test func theCacheIsPrivateToItsUser() throws {
        let cache = try makeCache()
        try cache.storeUpdates([message(1)])
        let files = FileManager.default
        let directoryMode = try files.attributesOfItem(atPath: cache.directory.path)[.posixPermissions] as? Int
        #expect(directoryMode == 0o700)
        for name in try files.contentsOfDirectory(atPath: cache.directory.path) {
            let attributes = try files.attributesOfItem(atPath: cache.directory.appendingPathComponent(name).path)
            let expected = attributes[.type] as? FileAttributeType == .typeDirectory ? 0o700 : 0o600
            #expect(attributes[.posixPermissions] as? Int == expected, "\(name)")
        }
        cache.close()
        try ChatCache.destroy(directory: cache.directory)
        #expect(!files.fileExists(atPath: cache.directory.path))
    }

    @Test func metaValuesPersistAcrossReopen() throws {
        let cache = try makeCache()
        try cache.setMeta("cursor", "c1.42")
        cache.close()
        let reopened = try ChatCache(directory: cache.directory, uid: "a", clock: { 0 })
        #expect(try reopened.meta("cursor") == "c1.42")
        try reopened.setMeta("cursor", nil)
        #expect(try reopened.meta("cursor") == nil)
    }
}

@Suite struct ConversationCacheTests {
    func conversation(_ id: String, at time: Int64) -> ConversationPayload {
        ConversationPayload(
            conversationId: id, conversationType: .user, conversationWith: .user(UserPayload(uid: id, name: id)),
            lastMessage: nil, unreadMessageCount: 0, lastDeliveredMessageId: nil, lastReadMessageId: nil,
            peerDeliveredMessageId: nil, peerReadMessageId: nil, updatedAt: time)
    }

    @Test func aServerPageReplacesItsSliceOfTheList() throws {
        let cache = try makeCache()
        try cache.storeConversationPage(
            [conversation("c5", at: 50), conversation("c4", at: 40), conversation("c3", at: 30)],
            first: true, last: false)
        try cache.storeConversationPage(
            [conversation("c2", at: 20), conversation("c1", at: 10)], first: false, last: true)
        #expect(
            try cache.cachedConversations(after: nil, limit: 10).map(\.conversationId) == ["c5", "c4", "c3", "c2", "c1"]
        )
        // c4 is gone from the server's first page: it is dropped; c1..c2 are outside the slice.
        let removed = try cache.storeConversationPage(
            [conversation("c6", at: 60), conversation("c5", at: 50), conversation("c3", at: 30)],
            first: true, last: false)
        #expect(removed == ["c4"])
        #expect(try cache.cachedConversations(after: nil, limit: 2).map(\.conversationId) == ["c6", "c5"])
        #expect(try cache.cachedConversations(after: (50, "c5"), limit: 10).map(\.conversationId) == ["c3", "c2", "c1"])
    }

    @Test func aLiveMessageBumpsItsConversation() throws {
        let cache = try makeCache()
        try cache.storeConversationPage([conversation("a~b", at: 5)], first: true, last: true)
        try cache.storeLive(message(9))
        let bumped = try #require(try cache.conversation(id: "a~b"))
        #expect(bumped.lastMessage?.id == 9 && bumped.unreadMessageCount == 1 && bumped.updatedAt == 90)
        try cache.storeLive(message(10, from: "a"))
        #expect(try cache.conversation(id: "a~b")?.unreadMessageCount == 1, "one's own message is not unread")
    }
}

@Suite struct ReviewRegressionTests {
    let scope = CacheScope.conversation("a~b")

    @Test func aReopenedCacheHasNoOpenStretch() throws {
        let cache = try makeCache()
        try cache.storePage(
            (1...3).map { message($0) }, scope: scope, anchor: .latest, limit: 3, complete: true,
            liveSince: cache.liveEpoch)
        #expect(try cache.ranges(scope).map(\.open) == [true])
        cache.close()
        let reopened = try ChatCache(directory: cache.directory, uid: "a", clock: { 0 })
        #expect(try reopened.ranges(scope).map(\.open) == [false], "a new process has no live connection")
        try reopened.storeLive(message(9))
        #expect(
            try reopened.cachedPage(scope, .latest, limit: 30).map(\.id) == [9],
            "so a live message does not bridge the gap")
    }

    @Test func aPageFetchedAcrossADisconnectDoesNotClaimTheLiveHead() throws {
        let cache = try makeCache()
        let epoch = cache.liveEpoch
        try cache.closeOpenRanges()  // the connection dropped while the request was out
        try cache.storePage(
            (1...3).map { message($0) }, scope: scope, anchor: .latest, limit: 3, complete: true, liveSince: epoch)
        #expect(try cache.ranges(scope).map(\.open) == [false])
    }

    @Test func trimmingShrinksThreadStretchesToo() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cache-test-\(UUID().uuidString)/test/a")
        let cache = try ChatCache(
            directory: directory, uid: "a", limits: CacheLimits(maxMessagesPerConversation: 2), clock: { 1 })
        let thread = CacheScope.thread(parentId: 1)
        try cache.storePage(
            [message(2, parent: 1), message(3, parent: 1)], scope: thread, anchor: .latest, limit: 30, complete: true,
            liveSince: nil)
        try cache.storePage(
            [message(5), message(6)], scope: scope, anchor: .before(7), limit: 2, complete: true, liveSince: nil)
        #expect(try cache.cachedPage(thread, .latest, limit: 30).isEmpty, "the trimmed replies are not claimed")
        #expect(try cache.ranges(thread).isEmpty)
    }
}

@Suite struct ConversationSliceTests {
    func conversation(_ id: String, at time: Int64) -> ConversationPayload {
        ConversationPayload(
            conversationId: id, conversationType: .user, conversationWith: .user(UserPayload(uid: id, name: id)),
            lastMessage: nil, unreadMessageCount: 0, lastDeliveredMessageId: nil, lastReadMessageId: nil,
            peerDeliveredMessageId: nil, peerReadMessageId: nil, updatedAt: time)
    }

    @Test func equalTimesAreSplitByIdAsTheServerDoes() throws {
        let cache = try makeCache()
        // Server order: (30, c3), (30, c2) on page one; (30, c1) on page two.
        try cache.storeConversationPage(
            [conversation("c3", at: 30), conversation("c2", at: 30), conversation("c1", at: 30)], first: true,
            last: true)
        let removed = try cache.storeConversationPage(
            [conversation("c3", at: 30), conversation("c2", at: 30)], first: true, last: false)
        #expect(removed.isEmpty, "c1 belongs to the next page")
        #expect(try cache.cachedConversations(after: nil, limit: 10).count == 3)
    }
}
