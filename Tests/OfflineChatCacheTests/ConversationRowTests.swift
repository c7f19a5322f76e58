import Foundation
import OfflineChatProtocol
import OfflineChatSQLite
import Testing

@testable import OfflineChatCache

/// The cached conversation list is stored as columns (schema v6): every field comes back as
/// it went in, and a cache written by the JSON-per-row schema moves over intact.
@Suite struct ConversationRowTests {
    static let user = {
        var user = UserPayload(
            uid: "bob", name: "Bob", avatar: "https://a/b.png", metadata: ["k": .array([.number(1), .null])],
            tags: ["vip", "é"], role: "staff", lastActiveAt: 1_700)
        user.status = "online"
        user.blockedByMe = false
        user.hasBlockedMe = true
        return user
    }()

    static let last: MessagePayload = {
        var message = message(40, in: "a~bob", from: "bob", text: "latest", parent: 3, updatedAt: 500)
        message.attachment = Attachment(
            url: "/v1/media/x", name: "x.png", size: 3, mimeType: "image/png", extension: "png")
        message.reactions = [ReactionCount(reaction: "👍", count: 2)]
        message.replyCount = 4
        return message
    }()

    /// One of each shape: a user with every field, a bare user, a group with every field, a bare group.
    static let conversations: [ConversationPayload] = [
        ConversationPayload(
            conversationId: "a~bob", conversationType: .user, conversationWith: .user(user), lastMessage: last,
            unreadMessageCount: 3, lastDeliveredMessageId: 39, lastReadMessageId: 38, peerDeliveredMessageId: 40,
            peerReadMessageId: 37, updatedAt: 90),
        ConversationPayload(
            conversationId: "a~carol", conversationType: .user,
            conversationWith: .user(UserPayload(uid: "carol", name: "carol")),
            lastMessage: nil, unreadMessageCount: 0, lastDeliveredMessageId: nil, lastReadMessageId: nil,
            peerDeliveredMessageId: nil, peerReadMessageId: nil, updatedAt: 80),
        ConversationPayload(
            conversationId: "group_g", conversationType: .group,
            conversationWith: .group(
                GroupPayload(
                    guid: "g", name: "G", type: .password, icon: "i", description: "d",
                    metadata: ["x": .bool(true)], tags: ["t"], owner: "bob", membersCount: 7,
                    createdAt: 1, updatedAt: 2, hasJoined: true, scope: .moderator, joinedAt: 3)),
            lastMessage: message(41, in: "group_g"), unreadMessageCount: 1, lastDeliveredMessageId: 41,
            lastReadMessageId: 20,
            peerDeliveredMessageId: nil, peerReadMessageId: nil, updatedAt: 70),
        ConversationPayload(
            conversationId: "group_h", conversationType: .group,
            conversationWith: .group(
                GroupPayload(
                    guid: "h", name: "H", type: .public, owner: "a", membersCount: 1,
                    createdAt: 5, updatedAt: 6)),
            lastMessage: nil, unreadMessageCount: 0, lastDeliveredMessageId: nil, lastReadMessageId: nil,
            peerDeliveredMessageId: nil, peerReadMessageId: nil, updatedAt: 60)
    ]

    /// What the cache gives back for a conversation (a reply count of 0 reads back as none).
    static func asStored(_ conversation: ConversationPayload) -> ConversationPayload {
        var stored = conversation
        stored.lastMessage = conversation.lastMessage.map(MessageRow.asStored)
        return stored
    }

    @Test func everyFieldOfEveryShapeComesBack() throws {
        let cache = try makeCache()
        try cache.storeConversationPage(Self.conversations, first: true, last: true)
        #expect(try cache.cachedConversations(after: nil, limit: 10) == Self.conversations.map(Self.asStored))
        #expect(try cache.conversation(id: "group_g") == Self.asStored(Self.conversations[2]))
        #expect(try cache.conversation(id: "nobody") == nil)
        // A refresh replaces what changed, the last message included (or its absence).
        var changed = Self.conversations[0]
        changed.lastMessage = nil
        changed.unreadMessageCount = 0
        try cache.storeConversation(changed)
        #expect(try cache.conversation(id: "a~bob") == changed)
    }

    @Test func aLiveMessageBecomesTheLastMessageAndCountsAsUnread() throws {
        let cache = try makeCache()
        try cache.storeConversationPage(Self.conversations, first: true, last: true)
        try cache.storeLive(message(50, in: "a~carol", from: "carol"))
        let carol = try #require(try cache.conversation(id: "a~carol"))
        #expect(carol.lastMessage?.id == 50 && carol.unreadMessageCount == 1 && carol.updatedAt == 500)
        #expect(
            try cache.cachedConversations(after: nil, limit: 1).map(\.conversationId) == ["a~carol"], "moved to the top"
        )
        try cache.removeConversation("a~carol")
        #expect(try cache.conversation(id: "a~carol") == nil)
    }

    /// A cache written before schema v6 (one JSON document per conversation) opens with its
    /// conversations intact, last-use times included.
    @Test func aCacheFromTheJSONSchemaMovesOver() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cache-test-\(UUID().uuidString)/test/a")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let old = try Connection(path: directory.appendingPathComponent("cache.sqlite").path)
        for migration in CacheSchema.migrator.migrations.prefix(5) {
            try old.transaction { db in
                try migration.apply(db)
                try db.execute("PRAGMA user_version = \(migration.version)")
            }
        }
        for (index, conversation) in Self.conversations.enumerated() {
            try old.run(
                "INSERT INTO conversations(id, updated_at, last_access, payload) VALUES (?, ?, ?, ?)",
                [
                    conversation.conversationId, conversation.updatedAt, Int64(100 + index),
                    try ChatCache.json(conversation)
                ])
        }
        try old.close()
        let cache = try ChatCache(directory: directory, uid: "a", clock: { 1_000 })
        #expect(try cache.cachedConversations(after: nil, limit: 10) == Self.conversations.map(Self.asStored))
        #expect(
            try cache.read { db in try db.scalar("SELECT last_access FROM conversations WHERE id = 'group_h'") as Int64?
            } == 103)
    }
}
