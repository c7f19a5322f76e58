import Foundation
import OfflineChatCache
import OfflineChatProtocol
import Testing

@Suite struct LimitTests {
    /// A cache whose clock moves one millisecond per reading, so use order is well defined.
    func makeCache(_ limits: CacheLimits) throws -> ChatCache {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cache-test-\(UUID().uuidString)/test/a")
        let ticks = Ticker()
        return try ChatCache(directory: directory, uid: "a", limits: limits, clock: { ticks.next() })
    }

    final class Ticker: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Int64 = 0
        func next() -> Int64 {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value
        }
    }

    @Test func aConversationKeepsItsNewestMessagesAndItsStretchShrinks() throws {
        let cache = try makeCache(CacheLimits(maxMessagesPerConversation: 3))
        let scope = CacheScope.conversation("a~b")
        try cache.storePage(
            (1...5).map { message($0) }, scope: scope, anchor: .latest, limit: 30, complete: true, liveSince: nil)
        #expect(try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [3, 4, 5])
        #expect(try cache.ranges(scope).map { [$0.lo, $0.hi] } == [[3, 5]], "the stretch no longer claims 0…2")
        #expect(try cache.cachedPage(scope, .before(3), limit: 30).isEmpty)
        try cache.storeLive(message(6))
        #expect(try cache.cachedPage(scope, .latest, limit: 30).map(\.id) == [4, 5, 6])
    }

    @Test func theLeastRecentlyUsedConversationGoesFirst() throws {
        let cache = try makeCache(CacheLimits(maxConversations: 2))
        for conversation in ["a~c1", "a~c2"] {
            try cache.storePage(
                [message(conversation == "a~c1" ? 1 : 2, in: conversation)], scope: .conversation(conversation),
                anchor: .latest, limit: 30, complete: true, liveSince: nil)
        }
        _ = try cache.cachedPage(.conversation("a~c1"), .latest, limit: 30)
        cache.touch(["a~c1"])
        try cache.storePage(
            [message(3, in: "a~c3")], scope: .conversation("a~c3"), anchor: .latest, limit: 30, complete: true,
            liveSince: nil)
        #expect(try cache.message(id: 1) != nil, "recently read: kept")
        #expect(try cache.message(id: 2) == nil, "least recently used: evicted")
        #expect(try cache.message(id: 3) != nil)
        #expect(try cache.ranges(.conversation("a~c2")).isEmpty)
    }

    /// A cold start's last messages are stored in the list's own write, so the conversation
    /// limit counts them: an evicted conversation takes its last message with it.
    @Test func theLastMessagesAColdStartKeepsAreUnderTheConversationLimit() throws {
        let cache = try makeCache(CacheLimits(maxConversations: 1))
        let page = [(3, "a~c1"), (2, "a~c2")].map { id, conversation in
            ConversationPayload(
                conversationId: conversation, conversationType: .user,
                conversationWith: .user(UserPayload(uid: conversation, name: conversation)),
                lastMessage: message(Int64(id), in: conversation), unreadMessageCount: 1,
                lastDeliveredMessageId: nil, lastReadMessageId: nil, peerDeliveredMessageId: nil,
                peerReadMessageId: nil, updatedAt: Int64(id))
        }
        try cache.storeConversationPage(page, first: true, last: true, keepingLastMessages: true)
        let kept = try ["a~c1", "a~c2"].filter { try cache.conversation(id: $0) != nil }
        #expect(kept.count == 1)
        for conversation in ["a~c1", "a~c2"] {
            let readable = try cache.cachedPage(.conversation(conversation), .latest, limit: 30).map(\.id)
            #expect(
                readable == (kept.contains(conversation) ? [conversation == "a~c1" ? 3 : 2] : []), "\(conversation)")
        }
    }

    @Test func theByteBudgetEvictsUntilItFitsAndCountsMedia() throws {
        let cache = try makeCache(CacheLimits(maxStorageSize: 400 << 10))
        let big = String(repeating: "x", count: 20_000)
        for index in 0..<40 {
            let conversation = "a~c\(index)"
            try cache.storePage(
                [message(Int64(index + 1), in: conversation, text: big)], scope: .conversation(conversation),
                anchor: .latest, limit: 30, complete: true, liveSince: nil)
        }
        #expect(try cache.message(id: 40) != nil, "the newest conversation stays")
        #expect(try cache.message(id: 1) == nil, "the oldest went")
        let databaseBytes =
            try FileManager.default.attributesOfItem(
                atPath: cache.directory.appendingPathComponent("cache.sqlite").path)[.size] as? Int64 ?? 0
        #expect(databaseBytes < 2 * (400 << 10), "incremental vacuum gives space back")

        // A media file counts too, and leaves with its message.
        let file = try cache.storeMedia(Data(count: 300 << 10), messageId: 40, name: "photo.jpg")
        #expect(FileManager.default.fileExists(atPath: file.path))
        try cache.storePage(
            [message(41, in: "a~new", text: big)], scope: .conversation("a~new"), anchor: .latest, limit: 30,
            complete: true, liveSince: nil)
        #expect(cache.sizeOnDisk() > 300 << 10)
        #expect(try cache.message(id: 39) == nil, "media pushed older conversations out")
    }

    @Test func mediaFilesArePrivateAndEvictedWithTheirConversation() throws {
        let cache = try makeCache(CacheLimits(maxConversations: 1))
        try cache.storePage(
            [message(1)], scope: .conversation("a~b"), anchor: .latest, limit: 30, complete: true, liveSince: nil)
        let file = try cache.storeMedia(Data("bytes".utf8), messageId: 1, name: "a/b.txt")
        #expect(file.lastPathComponent == "1-a_b.txt")
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int) == 0o600)
        try cache.storePage(
            [message(2, in: "a~c")], scope: .conversation("a~c"), anchor: .latest, limit: 30, complete: true,
            liveSince: nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }
}

@Suite struct PendingEvictionTests {
    @Test func evictionNeverTouchesQueuedMessages() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cache-test-\(UUID().uuidString)/test/a")
        let ticks = LimitTests.Ticker()
        let cache = try ChatCache(
            directory: directory, uid: "a",
            limits: CacheLimits(
                maxConversations: 1, maxMessagesPerConversation: 1,
                maxStorageSize: 1),
            clock: { ticks.next() })
        var queued = message(0, in: "a~q", from: "a")
        queued.muid = "queued-1"
        let request = SendMessageRequest(muid: "queued-1", receiver: "q", text: "still here")
        let localId = try cache.enqueue(request, showing: queued, maxPending: 10)
        for index in 1...5 {
            try cache.storePage(
                [message(Int64(index), in: "a~c\(index)")], scope: .conversation("a~c\(index)"), anchor: .latest,
                limit: 30, complete: true, liveSince: nil)
        }
        try cache.storePage(
            [message(20, in: "a~q"), message(21, in: "a~q")], scope: .conversation("a~q"), anchor: .latest,
            limit: 30, complete: true, liveSince: nil)
        let items = try cache.outboxItems()
        #expect(
            items.map(\.localId) == [localId] && items.first?.request.text == "still here",
            "the byte budget, the conversation cap and the message cap all spared it")
    }
}
