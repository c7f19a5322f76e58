import Foundation
import OfflineChatProtocol
import OfflineChatSQLite
import OfflineChatWebSocket
import Testing

@testable import ChatServer

/// Pages read from the user's log and their groups' logs (`c3` cursors, docs/GROUPS.md): a
/// member sees a group's changes from their join to their removal, never before or after,
/// whatever the cursor says.
@Suite struct GroupLogPageTests {
    /// Every change `uid` reads from `cursor` on, in pages of `limit`, and the last cursor.
    static func readAll(
        _ store: Store, _ uid: String, from cursor: String, limit: Int = 1000
    ) throws -> (changes: [ChangePayload], cursor: String) {
        var changes: [ChangePayload] = []
        var cursor = cursor
        for _ in 0..<1000 {
            let page = try JSONDecoder().decode(
                ChangelogPage.self,
                from: Data(try store.changes(for: uid, cursor: cursor, limit: limit, groupLogs: true).json.bytes))
            #expect(page.changes.count <= limit)
            changes += page.changes
            cursor = page.cursor
            if !page.hasMore { break }
        }
        return (changes, cursor)
    }

    static func head(_ store: Store, _ uid: String) throws -> String {
        try store.changes(for: uid, cursor: nil, limit: 1, groupLogs: true).cursor
    }

    static func send(_ store: Store, _ text: String, from sender: String, to guid: String = "g") throws {
        _ = try store.send(
            from: sender, SendMessageRequest(muid: text, receiver: guid, receiverType: .group, text: text))
    }

    /// What `uid`'s changes say in order: texts of messages (actions by their sentence) and kinds of the rest.
    static func texts(_ changes: [ChangePayload]) -> [String] {
        changes.map { $0.message?.text ?? $0.kind.rawValue }
    }

    @Test(arguments: GroupCommitTests.engines) func aMemberSeesFromTheirJoinToTheirRemovalInAnyPageSize(
        engine: String
    ) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["alice", "bob"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        _ = try store.createGroup(CreateGroupRequest(guid: "g", name: "g"), by: "alice", passwordHash: nil)
        try Self.send(store, "before", from: "alice")
        let start = try Self.head(store, "bob")
        _ = try store.join("g", uid: "bob", verifiedHash: nil)
        try Self.send(store, "one", from: "alice")
        _ = try store.send(from: "alice", SendMessageRequest(muid: "d1", receiver: "bob", text: "direct"))
        try store.kick("g", "bob", by: "alice")
        try Self.send(store, "while out", from: "alice")
        _ = try store.join("g", uid: "bob", verifiedHash: nil)
        try Self.send(store, "two", from: "alice")
        _ = try store.ban("g", "bob", by: "alice")
        try Self.send(store, "after the ban", from: "alice")

        let expected = ["direct", "bob joined", "one", "alice kicked bob", "bob joined", "two", "alice banned bob"]
        for limit in [1, 2, 3, 1000] {
            let read = try Self.readAll(store, "bob", from: start, limit: limit)
            #expect(Self.texts(read.changes).sorted() == expected.sorted(), "pages of \(limit)")
            let group = Self.texts(read.changes.filter { $0.conversationId == "group_g" })
            #expect(group == expected.filter { $0 != "direct" }, "in the group's order, pages of \(limit)")
            #expect(!read.cursor.contains("g:"), "a banned member's cursor no longer reads the group: \(read.cursor)")
        }
        // A cursor at the head after the ban reads nothing of the group.
        try Self.send(store, "later", from: "alice")
        #expect(try Self.readAll(store, "bob", from: try Self.head(store, "bob")).changes.isEmpty)
    }

    /// Retention is per log: a busy group's log is trimmed, its members' own logs are not. A
    /// position older than the group's kept log answers `conversation.reset` for that group
    /// (its `seq` the position before the first change kept), then the changes kept, and the
    /// rest of the cursor reads on.
    @Test func aTooOldGroupPositionResetsThatConversationOnly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("group-reset-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory, clock: SystemClock(), retention: 5)
        for uid in ["alice", "bob"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        _ = try store.createGroup(CreateGroupRequest(guid: "g", name: "g"), by: "alice", passwordHash: nil)
        _ = try store.join("g", uid: "bob", verifiedHash: nil)
        let start = try Self.head(store, "bob")
        _ = try store.send(from: "alice", SendMessageRequest(muid: "d", receiver: "bob", text: "direct"))
        for index in 0..<20 { try Self.send(store, "g\(index)", from: "alice") }
        let read = try Self.readAll(store, "bob", from: start)
        let reset = try #require(read.changes.first { $0.kind == .conversationReset })
        #expect(reset.conversationId == "group_g")
        let kept = read.changes.filter { $0.conversationId == "group_g" && $0.kind == .messageCreated }
        #expect(reset.seq + 1 == kept.first?.seq && kept.last?.message?.text == "g19" && kept.count < 20)
        #expect(read.changes.contains { $0.message?.text == "direct" }, "bob's own log is whole")
        #expect(read.cursor.hasSuffix(".g:22"), "\(read.cursor)")

        // carol, added while away, finds the group by her bound (kept with her own log) even
        // though the changes around it were pruned: the add, a reset, what was kept.
        _ = try store.createUser(CreateUserRequest(uid: "carol"))
        let carols = try Self.head(store, "carol")
        _ = try store.addMember("g", "carol", scope: .participant, by: "alice")
        for index in 20..<40 { try Self.send(store, "g\(index)", from: "alice") }
        let hers = try Self.readAll(store, "carol", from: carols)
        #expect(hers.changes.first?.message?.text == "alice added carol")
        #expect(hers.changes.dropFirst().first?.kind == .conversationReset && hers.changes.last?.message?.text == "g39")
        #expect(hers.cursor.hasSuffix(".g:43"), "\(hers.cursor)")
        #expect(throws: StoreError.self, "a client that does not know resets rebuilds") {
            try store.changes(for: "carol", cursor: carols, limit: 100)
        }
    }

    /// A deleted group gives its members the deletion, and then leaves their cursors.
    @Test(arguments: GroupCommitTests.engines) func aDeletedGroupLeavesItsMembersCursors(engine: String) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["alice", "bob"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        _ = try store.createGroup(CreateGroupRequest(guid: "g", name: "g"), by: "alice", passwordHash: nil)
        _ = try store.join("g", uid: "bob", verifiedHash: nil)
        let start = try Self.head(store, "bob")
        #expect(start.hasSuffix(".g:2"), "\(start)")
        try Self.send(store, "last words", from: "alice")
        try store.deleteGroup("g", by: "alice")
        let read = try Self.readAll(store, "bob", from: start)
        #expect(Self.texts(read.changes) == ["last words", "group.deleted"])
        #expect(read.cursor.hasSuffix("."), "no group left in \(read.cursor)")
    }

    /// A cursor names positions and groups as it likes: a page still shows only what its
    /// owner's memberships cover. A cursor naming a group they never joined reads nothing of
    /// it; one set back inside a membership reads that membership again, nothing before it.
    @Test func aForgedCursorReadsOnlyWhatItsOwnerMaySee() throws {
        let store = try GroupCommitTests.store("sqlite")
        for uid in ["alice", "bob", "eve"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        _ = try store.createGroup(
            CreateGroupRequest(guid: "g", name: "g", type: .private), by: "alice", passwordHash: nil)
        try Self.send(store, "secret", from: "alice")
        _ = try store.addMember("g", "bob", scope: .participant, by: "alice")
        try Self.send(store, "hello bob", from: "alice")
        let epoch = store.epoch
        let eve = ChangelogCursor.encode(epoch: epoch, position: 0, groups: ["g": 0])
        #expect(try Self.readAll(store, "eve", from: eve).changes.isEmpty)
        let bob = ChangelogCursor.encode(epoch: epoch, position: 0, groups: ["g": 0])
        #expect(Self.texts(try Self.readAll(store, "bob", from: bob).changes) == ["alice added bob", "hello bob"])
        let ahead = ChangelogCursor.encode(epoch: epoch, position: 99, groups: [:])
        #expect(throws: StoreError.self) { try store.changes(for: "bob", cursor: ahead, limit: 10) }
        let otherEpoch = ChangelogCursor.encode(epoch: "abc", position: 0, groups: [:])
        #expect(throws: StoreError.self) { try store.changes(for: "bob", cursor: otherEpoch, limit: 10) }
    }

    /// Members from before spans were written (SQLite 24 opens theirs at the group's head):
    /// their head cursor names the group, and they read what follows.
    @Test func membersFromBeforeSpansReadTheirGroups() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("group-pages-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let store = try Store(directory: directory, clock: SystemClock())
            for uid in ["alice", "bob"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
            _ = try store.createGroup(CreateGroupRequest(guid: "g", name: "g"), by: "alice", passwordHash: nil)
            _ = try store.join("g", uid: "bob", verifiedHash: nil)
            try store.close()
        }
        let db = try Connection(path: directory.appendingPathComponent("chatd.sqlite").path)
        try OldSchema.rewind(db, to: 23)
        try db.execute("DELETE FROM group_spans")
        try db.close()
        let store = try Store(directory: directory, clock: SystemClock())
        defer { try? store.close() }
        let start = try Self.head(store, "bob")
        #expect(start.hasSuffix(".g:2"), "\(start)")
        try Self.send(store, "news", from: "alice")
        #expect(Self.texts(try Self.readAll(store, "bob", from: start).changes) == ["news"])
    }
}

/// A realtime socket that reads group logs (`?groupLogs=true`): its hello and every frame carry
/// a `c3` cursor, each group change's `seq` is its position in the group's log, and a page
/// read from any frame's cursor gives exactly the changes after that frame.
@Suite(.serialized) struct GroupLogRealtimeTests {
    @Test func everyFramesCursorResumesExactlyAfterIt() async throws {
        let story = try await Self.tell(on: try LiveServer(), query: "groupLogs=true")
        let (socket, start) = (story.socket, story.start)
        defer { socket.close() }
        #expect(start.hasPrefix("c3.") && start.hasSuffix(".g:2"), "\(start)")
        let expected = try await story.page(from: start)
        var received: [String] = []
        var cursors: [String] = []
        while received.count < expected.count {
            let envelope = try socket.nextEnvelope()
            guard let change = envelope.change else { continue }
            received.append(Self.place(change))
            cursors.append(try #require(envelope.cursor))
        }
        #expect(Set(received) == Set(expected) && received.count == expected.count)
        let texts = received.filter { $0.hasPrefix("group_g") }.map { $0.split(separator: " ")[1] }
        #expect(texts == ["3", "4", "5", "6", "7", "9", "10"], "group positions, the change while out skipped")
        #expect(cursors[5].hasSuffix(".g:7"), "the kick's frame keeps the group at the kick: \(cursors[5])")
        for index in cursors.indices {
            #expect(
                Set(try await story.page(from: cursors[index])) == Set(received[(index + 1)...]), "after frame \(index)"
            )
        }
    }
}

extension GroupLogRealtimeTests {
    /// What bob's socket (opened with `query`) sees: he is in alice's group g; then four group
    /// messages, a direct one from carol, bob kicked, a message while he is out, bob added back
    /// and one more message. His hello's cursor, and his pages from any cursor.
    struct Story {
        let server: LiveServer
        let bob: String
        let socket: WebSocketClient
        let start: String

        /// bob's page from `cursor`, each change as `place` writes it.
        func page(from cursor: String) async throws -> [String] {
            try await server.request("POST", Endpoints.changes, token: bob, json: ChangesRequest(cursor: cursor))
                .decode(ChangelogPage.self).changes.map(GroupLogRealtimeTests.place)
        }
    }

    static func tell(on server: LiveServer, query: String) async throws -> Story {
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        try await server.group("g", by: alice)
        try await server.addMember("bob", to: "g", by: alice)
        let socket = try WebSocketClient.connect(
            to: URL(string: "ws://127.0.0.1:\(server.port)\(Endpoints.realtime)?\(query)")!,
            headers: ["Authorization": "Bearer \(bob)"])
        let start = try #require(try socket.nextEnvelope().cursor)
        for index in 0..<4 { #expect(try await server.sendToGroup("g\(index)", from: alice, to: "g").status == 201) }
        try await server.send("direct", from: carol, to: "bob")
        #expect(try await server.request("DELETE", "\(Endpoints.groups)/g/members/bob", token: alice).status == 204)
        #expect(try await server.sendToGroup("while out", from: alice, to: "g").status == 201)
        try await server.addMember("bob", to: "g", by: alice)
        #expect(try await server.sendToGroup("back", from: alice, to: "g").status == 201)
        return Story(server: server, bob: bob, socket: socket, start: start)
    }

    /// A change as "conversation seq kind".
    static func place(_ change: ChangePayload) -> String {
        "\(change.conversationId) \(change.seq) \(change.kind.rawValue)"
    }

    /// A socket opened with `cursorFrames=true`: its change frames carry no cursor (a group's is
    /// the same bytes for every member), and coalesced `cursor` frames (at most one in
    /// `--cursor-interval`, the first at once) each resume exactly after every change before it.
    @Test func cursorFramesCoverEveryChangeBeforeThem() async throws {
        let story = try await Self.tell(
            on: try LiveServer(arguments: ["--cursor-interval", "3"]), query: "groupLogs=true&cursorFrames=true")
        let (socket, start) = (story.socket, story.start)
        defer { socket.close() }
        let expected = try await story.page(from: start)
        var received: [String] = []
        var cursors: [(after: Int, cursor: String)] = []
        while cursors.last?.after != expected.count {
            let envelope = try socket.nextEnvelope()
            switch envelope.type {
            case .change:
                received.append(Self.place(try #require(envelope.change)))
                #expect(envelope.cursor == nil, "a change frame carries no cursor here")
            case .cursor: cursors.append((received.count, try #require(envelope.cursor)))
            default: continue
            }
        }
        #expect(Set(received) == Set(expected) && received.count == expected.count)
        #expect(cursors.first?.after == 1, "the first cursor frame follows the first change at once")
        #expect(cursors.count < received.count, "coalesced: \(cursors.map(\.after))")
        for (after, cursor) in cursors {
            #expect(Set(try await story.page(from: cursor)) == Set(received[after...]), "after change \(after)")
        }
    }

    /// Many writers at once while the socket's owner leaves and rejoins the group again and
    /// again (on PostgreSQL, changes reach the socket out of order and gaps are filled): the
    /// socket sends exactly what a page from its hello cursor gives, each group's changes in
    /// the group's order, and its last cursor is the head.
    @Test(.timeLimit(.minutes(2))) func aSocketKeepsUpWithConcurrentWritersAndItsOwnComingsAndGoings() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        let dave = try await server.user("dave")
        try await server.group("g", by: alice)
        for member in ["bob", "carol"] { try await server.addMember(member, to: "g", by: alice) }
        let socket = try WebSocketClient.connect(
            to: URL(string: "ws://127.0.0.1:\(server.port)\(Endpoints.realtime)?groupLogs=true")!,
            headers: ["Authorization": "Bearer \(bob)"])
        defer { socket.close() }
        let start = try #require(try socket.nextEnvelope().cursor)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (sender, token) in [("alice", alice), ("carol", carol)] {
                group.addTask {
                    for index in 0..<60 { _ = try await server.sendToGroup("\(sender) \(index)", from: token, to: "g") }
                }
            }
            group.addTask {
                for index in 0..<30 { try await server.send("dave \(index)", from: dave, to: "bob") }
            }
            group.addTask {
                for round in 0..<8 {
                    let path = "\(Endpoints.groups)/g/\(round % 2 == 0 ? "leave" : "join")"
                    let status = try await server.request("POST", path, token: bob).status
                    #expect((200...204).contains(status))
                }
            }
            try await group.waitForAll()
        }
        var expected: [String] = []
        var cursor = start
        while true {
            let page = try await server.request(
                "POST", Endpoints.changes, token: bob, json: ChangesRequest(cursor: cursor, limit: 100)
            ).decode(ChangelogPage.self)
            expected += page.changes.map { "\($0.conversationId) \($0.seq) \($0.kind.rawValue)" }
            cursor = page.cursor
            if !page.hasMore { break }
        }
        var received: [String] = []
        var last = start
        while received.count < expected.count {
            let envelope = try socket.nextEnvelope()
            guard let change = envelope.change else { continue }
            received.append("\(change.conversationId) \(change.seq) \(change.kind.rawValue)")
            last = try #require(envelope.cursor)
        }
        #expect(received.count == expected.count && Set(received) == Set(expected))
        let groupSeqs = received.filter { $0.hasPrefix("group_g ") }.map { Int64($0.split(separator: " ")[1])! }
        #expect(groupSeqs == groupSeqs.sorted(), "the group's changes in its order")
        let rest = try await server.request("POST", Endpoints.changes, token: bob, json: ChangesRequest(cursor: last))
            .decode(ChangelogPage.self)
        #expect(rest.changes.isEmpty, "the last frame's cursor is the head")
    }
}
