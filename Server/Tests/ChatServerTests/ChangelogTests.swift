import Foundation
import OfflineChatProtocol
import OfflineChatSQLite
import Testing

/// What one user can see, rebuilt either from the changelog or from the read endpoints.
struct UserView: Equatable {
    var messages: [Int64: MessagePayload] = [:]
    /// conversation → uid → (delivered, read)
    var receipts: [String: [String: Receipts]] = [:]

    struct Receipts: Equatable {
        var delivered: Int64 = 0
        var read: Int64 = 0
    }

    /// Applies one change for `me`. Read implies delivered; sending implies the sender read
    /// up to it; a membership change the target is in marks them read up to it, and one that
    /// takes them out of a group (or the group's deletion) takes the group from their view.
    mutating func apply(_ change: ChangePayload, for me: String) {
        if let message = change.message {
            merge(message)
            if change.kind == .messageCreated || change.kind == .groupMember {
                bump(change.conversationId, message.sender, read: message.id)
            }
            if let action = message.action, action.target == me {
                if action.action.removesTarget {
                    drop(change.conversationId)
                } else if action.action == .joined || action.action == .added {
                    bump(change.conversationId, me, read: message.id)
                }
            }
        }
        if change.kind == .groupDeleted { drop(change.conversationId) }
        if let receipt = change.receipt {
            if receipt.kind == .read {
                bump(change.conversationId, receipt.uid, read: receipt.messageId)
            } else {
                receipts[change.conversationId, default: [:]][receipt.uid, default: Receipts()].delivered =
                    max(receipts[change.conversationId]?[receipt.uid]?.delivered ?? 0, receipt.messageId)
            }
        }
    }

    /// Keeps the newer state of a message (a client merges by `updatedAt`).
    mutating func merge(_ message: MessagePayload) {
        if let known = messages[message.id], known.updatedAt > message.updatedAt { return }
        messages[message.id] = message
    }

    mutating func drop(_ conversationId: String) {
        messages = messages.filter { $0.value.conversationId != conversationId }
        receipts[conversationId] = nil
    }

    /// Only `me`'s own receipts in groups (the read endpoints show no one else's there).
    mutating func keepOwnGroupReceipts(_ me: String) {
        for (conversation, byUser) in receipts where conversation.hasPrefix(ConversationPayload.groupID("")) {
            receipts[conversation] = byUser.filter { $0.key == me }
        }
        receipts = receipts.filter { !$0.value.isEmpty }
    }

    private mutating func bump(_ conversation: String, _ uid: String, read id: Int64) {
        var current = receipts[conversation, default: [:]][uid, default: Receipts()]
        current.read = max(current.read, id)
        current.delivered = max(current.delivered, id)
        receipts[conversation, default: [:]][uid] = current
    }
}

@Suite struct ChangelogTests {
    @Test func anEmptyCursorAnswersTheHeadAndNoChanges() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        try await server.send("one", from: alice, to: "bob")
        let page = try await server.request("GET", Endpoints.changes, token: alice).decode(ChangelogPage.self)
        #expect(page.changes.isEmpty && !page.hasMore)
        guard case .logs(_, 1, [:]) = ChangelogCursor.parse(page.cursor) else {
            Issue.record("not alice's first position: \(page.cursor)")
            return
        }
        #expect(abs(page.serverTime - Int64(Date().timeIntervalSince1970)) < 300)
        try await server.send("two", from: alice, to: "bob")
        let next = try await server.request("GET", Endpoints.changes + "?cursor=\(page.cursor)", token: alice).decode(
            ChangelogPage.self)
        #expect(next.changes.map { $0.message?.text } == ["two"])
    }

    @Test func deletionsAndEditsArriveAsUpdates() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let head = try await server.request("GET", Endpoints.changes, token: bob).decode(ChangelogPage.self).cursor
        let message = try await server.send("x", from: alice, to: "bob")
        _ = try await server.request(
            "PATCH", "\(Endpoints.messages)/\(message.id)", token: alice, json: EditMessageRequest(text: "y"))
        _ = try await server.request("DELETE", "\(Endpoints.messages)/\(message.id)", token: alice)
        let page = try await server.request("GET", Endpoints.changes + "?cursor=\(head)", token: bob).decode(
            ChangelogPage.self)
        #expect(page.changes.map(\.kind) == [.messageCreated, .messageUpdated, .messageUpdated])
        #expect(page.changes[1].message?.text == "y")
        #expect(page.changes[2].message?.deletedAt != nil)
    }

    @Test func aCursorOlderThanTheRetentionWindowGetsItsOwnError() async throws {
        let server = try LiveServer(arguments: ["--changelog-retention", "10"])
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        for index in 0..<30 { try await server.send("m\(index)", from: alice, to: "bob") }
        let start = try await server.beginning(alice)
        let old = try await server.request("GET", Endpoints.changes + "?cursor=\(start)", token: alice)
        #expect(old.status == 410 && old.error?.code == .cursorExpired)
        let recent = try await server.request(
            "GET", Endpoints.changes + "?cursor=\(start.replacingOccurrences(of: ".0.", with: ".25."))", token: alice)
        #expect(try recent.decode(ChangelogPage.self).changes.count == 5)
    }

    /// Each user's changes are numbered 1, 2, 3… (their `seq`), whoever else writes between them.
    @Test func eachUserSeesTheirOwnGaplessPositions() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        _ = try await server.user("carol")
        let start = try await server.request("GET", Endpoints.changes, token: bob).decode(ChangelogPage.self).cursor
        try await server.send("to carol", from: alice, to: "carol")
        try await server.send("to bob", from: alice, to: "bob")
        try await server.send("to carol again", from: alice, to: "carol")
        try await server.send("to bob again", from: alice, to: "bob")
        let page = try await server.request("GET", Endpoints.changes + "?cursor=\(start)", token: bob).decode(
            ChangelogPage.self)
        #expect(
            page.changes.map(\.seq) == [1, 2] && page.changes.map { $0.message?.text } == ["to bob", "to bob again"])
        let all = try await server.request("GET", Endpoints.changes + "?cursor=\(start)", token: alice).decode(
            ChangelogPage.self)
        #expect(all.changes.map(\.seq) == [1, 2, 3, 4])
        // A cursor from another deployment (or from before a restore) is expired, not misread.
        guard case .logs(let epoch, let position, _) = ChangelogCursor.parse(page.cursor) else {
            Issue.record("\(page.cursor)")
            return
        }
        #expect(position == 2)
        let foreign = ChangelogCursor.encode(epoch: epoch == "1" ? "2" : "1", position: 1, groups: [:])
        let refused = try await server.request("GET", Endpoints.changes + "?cursor=\(foreign)", token: bob)
        #expect(refused.status == 410 && refused.error?.code == .cursorExpired)
        let ahead = ChangelogCursor.encode(epoch: epoch, position: 3, groups: [:])
        #expect(
            try await server.request("GET", Endpoints.changes + "?cursor=\(ahead)", token: bob).error?.code
                == .invalidCursor)
    }

    /// A deployment from before per-user positions: its changelog reads the same, numbered
    /// per user, and the cursors its clients hold (`c1`, like every cursor from before the group
    /// logs) answer `cursor_expired` once: the client rebuilds from the head.
    @Test(.enabled(if: LiveServer.onSQLite)) func anOldChangelogReadsOnAndItsCursorsRebuildOnce() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        _ = try await server.user("carol")
        for text in ["b1", "b2", "b3"] { try await server.send(text, from: alice, to: "bob") }
        for text in ["c1", "c2"] { try await server.send(text, from: alice, to: "carol") }
        server.stop()
        let db = try Connection(path: server.dataDirectory.appendingPathComponent("chatd.sqlite").path)
        try OldSchema.rewind(db, to: 11)
        let oldForm: Int64? = try db.scalar(
            "SELECT count(*) FROM changes WHERE instr(payload, '\"seq\":') > 0 AND payload NOT LIKE '%\"seq\":0}'")
        #expect(oldForm == 5, "the changes are stored with their global seq, as before")
        try db.close()
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        let bob = try await restarted.token("bob")
        let carol = try await restarted.token("carol")
        let old = try await restarted.request("GET", Endpoints.changes + "?cursor=c1.1", token: bob)
        #expect(old.status == 410 && old.error?.code == .cursorExpired)
        let bobs = try await restarted.request(
            "GET", Endpoints.changes + "?cursor=\(try await restarted.beginning(bob))", token: bob
        ).decode(ChangelogPage.self)
        #expect(bobs.changes.map(\.seq) == [1, 2, 3] && bobs.changes.map { $0.message?.text } == ["b1", "b2", "b3"])
        let carols = try await restarted.request(
            "GET", Endpoints.changes + "?cursor=\(try await restarted.beginning(carol))", token: carol
        ).decode(ChangelogPage.self)
        #expect(carols.changes.map(\.seq) == [1, 2] && carols.changes.map { $0.message?.text } == ["c1", "c2"])
        let caughtUp = try await restarted.request("GET", Endpoints.changes + "?cursor=\(carols.cursor)", token: carol)
            .decode(ChangelogPage.self)
        #expect(caughtUp.changes.isEmpty)
    }

    /// Several users make a few thousand random changes concurrently; replaying each user's
    /// changelog in pages from the head before the start rebuilds exactly what the read
    /// endpoints show them: no gap, no duplicate, pages within the limit.
    @Test func replayingTheChangelogReconstructsEachUsersView() async throws {
        try await replay(on: [try LiveServer()])
    }

    /// The same with three chatd nodes writing to one PostgreSQL database, each user's writes
    /// going through a node of its own: concurrent writers on several machines still leave
    /// every user a changelog without a gap or a duplicate.
    @Test(.enabled(if: LiveServer.postgres != nil)) func replayingTheChangelogOfThreeNodesReconstructsEachUsersView()
        async throws
    {
        let first = try LiveServer()
        try await replay(on: [
            first, try LiveServer(dataDirectory: first.dataDirectory),
            try LiveServer(dataDirectory: first.dataDirectory)
        ])
    }

    /// Writes through `servers` (user `i` through node `i % count`), reads through the first.
    func replay(on servers: [LiveServer]) async throws {
        let server = servers[0]
        let uids = (0..<5).map { "u\($0)" }
        var tokens: [String: String] = [:]
        for uid in uids { tokens[uid] = try await server.user(uid) }
        var logStarts: [String: String] = [:]
        for uid in uids {
            logStarts[uid] = try await server.request(
                "GET", Endpoints.changes + "?groupLogs=true", token: tokens[uid]!
            ).decode(ChangelogPage.self).cursor
        }
        // g0: public, anyone joins and leaves. g1: private, run by u1 (owner) and u2 (admin).
        try await server.group("g0", by: tokens["u0"]!)
        try await server.group("g1", .private, by: tokens["u1"]!)
        try await server.addMember("u2", to: "g1", scope: .admin, by: tokens["u1"]!)
        try await server.addMember("u3", to: "g1", by: tokens["u1"]!)

        try await withThrowingTaskGroup(of: Void.self) { group in
            for (worker, uid) in uids.enumerated() {
                let token = tokens[uid]!
                let server = servers[worker % servers.count]
                group.addTask {
                    var random = SeededRandom(seed: UInt64(worker + 1))
                    var mine: [MessagePayload] = []
                    for step in 0..<500 {
                        let peer = uids.filter { $0 != uid }[Int(random.next() % 4)]
                        switch random.next() % 17 {
                        case 0...3:
                            // Refused (and ignored) while a block stands between the two.
                            // Some mention the peer (feed items); some are calls.
                            let text = random.next() % 4 == 0 ? "hey <@uid:\(peer)> #\(step)" : "\(uid) #\(step)"
                            let request =
                                random.next() % 5 == 0
                                ? SendMessageRequest(
                                    muid: "m\(uid)-\(step)", receiver: peer, category: .call, type: "audio")
                                : SendMessageRequest(muid: "m\(uid)-\(step)", receiver: peer, text: text)
                            let reply = try await server.request(
                                "POST", Endpoints.messages, token: token, json: request)
                            if reply.status == 201 { mine.append(try reply.decode()) }
                        case 4 where !mine.isEmpty:
                            // A thread reply (refused, and ignored, when the parent is deleted or a reply).
                            let parent = mine[Int(random.next() % UInt64(mine.count))]
                            _ = try await server.request(
                                "POST", Endpoints.messages, token: token,
                                json: SendMessageRequest(
                                    muid: "r\(uid)-\(step)", receiver: parent.receiver,
                                    receiverType: parent.receiverType,
                                    text: "reply \(step)", parentMessageId: parent.id))
                        case 5...6 where !mine.isEmpty:
                            let target = mine[Int(random.next() % UInt64(mine.count))]
                            // A call moves on (refused, and ignored, when it cannot); text is edited.
                            let edit =
                                target.category == .call
                                ? EditMessageRequest(callStatus: [.ongoing, .ended, .missed][Int(random.next() % 3)])
                                : EditMessageRequest(text: "edited \(step)")
                            _ = try await server.request(
                                "PATCH", "\(Endpoints.messages)/\(target.id)", token: token, json: edit)
                        case 7 where !mine.isEmpty:
                            let target = mine[Int(random.next() % UInt64(mine.count))]
                            _ = try await server.request("DELETE", "\(Endpoints.messages)/\(target.id)", token: token)
                        case 8...9 where !mine.isEmpty:
                            let target = mine[Int(random.next() % UInt64(mine.count))]
                            let emoji = ["👍", "❤️", "😂"][Int(random.next() % 3)]
                            if random.next() % 3 == 0 {
                                _ = try await server.request(
                                    "DELETE",
                                    "\(Endpoints.messages)/\(target.id)/reactions/\(emoji.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!)",
                                    token: token)
                            } else {
                                _ = try await server.request(
                                    "POST", "\(Endpoints.messages)/\(target.id)/reactions", token: token,
                                    json: AddReactionRequest(reaction: emoji))
                            }
                        case 12:
                            _ = try await server.request(
                                "POST", "\(Endpoints.groups)/g0/\(random.next() % 2 == 0 ? "join" : "leave")",
                                token: token)
                        case 13...14:
                            // Refused (and ignored) when not a member.
                            let reply = try await server.sendToGroup(
                                "\(uid) in group #\(step)", from: token, to: "g\(random.next() % 2)")
                            if reply.status == 201 { mine.append(try reply.decode()) }
                        case 15 where uid == "u1" || uid == "u2":
                            let path = "\(Endpoints.groups)/g1"
                            switch random.next() % 4 {
                            case 0: _ = try await server.addMember(peer, to: "g1", by: token)
                            case 1: _ = try await server.request("DELETE", "\(path)/members/\(peer)", token: token)
                            case 2: _ = try await server.request("PUT", "\(path)/bans/\(peer)", token: token)
                            default: _ = try await server.request("DELETE", "\(path)/bans/\(peer)", token: token)
                            }
                        case 15...16:
                            _ = try await server.request(
                                random.next() % 2 == 0 ? "PUT" : "DELETE", "\(Endpoints.blocks)/\(peer)", token: token)
                        default:
                            let conversation =
                                random.next() % 3 == 0
                                ? ConversationPayload.groupID("g0") : ConversationPayload.directID(uid, peer)
                            let history = try await server.request(
                                "GET", "\(Endpoints.conversations)/\(conversation)/messages?limit=1", token: token)
                            guard history.status == 200, let last = try history.decode([MessagePayload].self).last
                            else { continue }
                            let kind = random.next() % 2 == 0 ? "read" : "delivered"
                            _ = try await server.request(
                                "POST", "\(Endpoints.conversations)/\(conversation)/\(kind)", token: token,
                                json: ReceiptRequest(messageId: last.id))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }

        var kindsSeen: [ChangeKind: Int] = [:]
        for uid in uids {
            let token = tokens[uid]!
            let actual = try await currentView(of: uid, token: token, server: server)
            // The user's and their groups' logs, asked by POST.
            var replayed = UserView()
            var cursor = logStarts[uid]!
            var seen: Set<String> = []
            var pages = 0
            while true {
                let page = try await server.request(
                    "POST", Endpoints.changes, token: token, json: ChangesRequest(cursor: cursor, limit: 97)
                ).decode(ChangelogPage.self)
                #expect(page.changes.count <= 97)
                for change in page.changes {
                    // A change's place in its log: its conversation (a group's or the user's) and position.
                    let place = "\(change.conversationId) \(change.seq) \(change.kind.rawValue) \(change.at)"
                    #expect(seen.insert(place).inserted, "no change twice")
                    kindsSeen[change.kind, default: 0] += 1
                    try await apply(change, to: &replayed, for: uid, token: token, server: server)
                }
                pages += 1
                cursor = page.cursor
                if !page.hasMore { break }
            }
            #expect(pages > 1)
            replayed.keepOwnGroupReceipts(uid)
            #expect(replayed.messages.count == actual.messages.count)
            #expect(replayed == actual, "replay of \(uid) differs from the read endpoints")
        }
        // The mix really covers groups, membership and blocks.
        for kind in [
            ChangeKind.groupMember, .userBlocked, .userUnblocked, .reactionAdded, .receiptRead, .notificationCreated
        ] {
            #expect(kindsSeen[kind, default: 0] >= 10, "only \(kindsSeen[kind, default: 0]) \(kind.rawValue) changes")
        }
        #expect(kindsSeen[.messageCreated, default: 0] > 100)
    }

    /// Applies a change as a client does. Coming into a group, a client fetches its history
    /// (members read all of it): only messages from before the join, since later ones must
    /// arrive as changes.
    func apply(
        _ change: ChangePayload, to view: inout UserView, for uid: String, token: String, server: LiveServer
    ) async throws {
        view.apply(change, for: uid)
        if let message = change.message, let action = message.action, action.target == uid,
            action.action == .joined || action.action == .added
        {
            for old in try await history(of: change.conversationId, token: token, server: server)
            where old.id < message.id {
                view.merge(old)
            }
        }
    }

    /// What the read endpoints show `uid`: every message of every conversation, and receipts.
    func currentView(of uid: String, token: String, server: LiveServer) async throws -> UserView {
        var view = UserView()
        var cursor: String?
        var listed: [ConversationPayload] = []
        repeat {
            let query = "?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try await server.request("GET", Endpoints.conversations + query, token: token).decode(
                Page<ConversationPayload>.self)
            listed += page.items
            for conversation in page.items {
                // Each member's copy of the conversation's time moved with its last message.
                if let last = conversation.lastMessage {
                    #expect(conversation.updatedAt == last.sentAt, "\(uid)'s \(conversation.conversationId)")
                }
                let messages = try await history(of: conversation.conversationId, token: token, server: server)
                for message in messages { view.messages[message.id] = message }
                // chatd keeps the unread count instead of counting: it must be what counting gives.
                let unread = messages.filter {
                    $0.id > conversation.lastReadMessageId ?? 0 && $0.sender != uid && $0.deletedAt == nil
                }.count
                #expect(
                    conversation.unreadMessageCount == unread, "\(uid)'s unread count in \(conversation.conversationId)"
                )
                var receipts: [String: UserView.Receipts] = [:]
                receipts[uid] = UserView.Receipts(
                    delivered: conversation.lastDeliveredMessageId ?? 0, read: conversation.lastReadMessageId ?? 0)
                if let peer = conversation.conversationWith.user?.uid {
                    receipts[peer] = UserView.Receipts(
                        delivered: conversation.peerDeliveredMessageId ?? 0, read: conversation.peerReadMessageId ?? 0)
                }
                view.receipts[conversation.conversationId] = receipts.filter { $0.value != UserView.Receipts() }
            }
            cursor = page.next
        } while cursor != nil
        let order = listed.map { ($0.updatedAt, $0.conversationId) }
        #expect(zip(order, order.dropFirst()).allSatisfy { $0 > $1 }, "\(uid)'s list in pages of 2, newest first")
        view.receipts = view.receipts.filter { !$0.value.isEmpty }
        return view
    }
}

extension ChangelogTests {
    /// Every message of a conversation the caller can read (none when they cannot).
    func history(of conversationId: String, token: String, server: LiveServer) async throws -> [MessagePayload] {
        var messages: [MessagePayload] = []
        var after: Int64 = 0
        while true {
            let reply = try await server.request(
                "GET", "\(Endpoints.conversations)/\(conversationId)/messages?limit=100&after=\(after)", token: token)
            guard reply.status == 200 else { return messages }
            let batch = try reply.decode([MessagePayload].self)
            messages += batch
            guard let last = batch.last else { return messages }
            after = last.id
        }
    }
}

/// A deterministic generator (SplitMix64), so a failing run can be replayed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
