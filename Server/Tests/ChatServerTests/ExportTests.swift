import Foundation
import OfflineChatProtocol
import Testing

/// `chatd export` / `chatd import`: moving a SQLite deployment to the suite's engine
/// (PostgreSQL in its run) keeps users, sessions, conversations, messages and, with
/// `--keep-epoch`, every client's changelog cursor.
@Suite struct ExportTests {
    @Test func aSQLiteDeploymentMovesWithItsSessionsAndCursors() async throws {
        let source = try LiveServer(sqlite: true)
        let alice = try await source.user("alice")
        let bob = try await source.user("bob")
        try await source.send("one", from: alice, to: "bob")
        let two = try await source.send("two", from: alice, to: "bob")
        _ = try await source.request(
            "POST", "\(Endpoints.messages)/\(two.id)/reactions", token: bob, json: AddReactionRequest(reaction: "👍"))
        let cursor = try await source.request("GET", Endpoints.changes, token: bob).decode(ChangelogPage.self).cursor
        let conversations = try await source.request("GET", Endpoints.conversations, token: bob).body
        let history = try await source.request(
            "GET", "\(Endpoints.conversations)/\(ConversationPayload.directID("alice", "bob"))/messages", token: bob
        ).body
        source.stop()
        let dump = source.dataDirectory.appendingPathComponent("export.jsonl").path
        let exported = try LiveServer.run(["export", "--output", dump, "--data", source.dataDirectory.path])
        #expect(exported.status == 0 && exported.output.hasPrefix("exported"), "\(exported.output)")

        let target = FileManager.default.temporaryDirectory.appendingPathComponent("chatd-test-\(UUID().uuidString)")
        let imported = try LiveServer.run(["import", dump, "--keep-epoch"] + (try LiveServer.storeArguments(target)))
        #expect(imported.status == 0, "\(imported.output)")
        let again = try LiveServer.run(["import", dump] + (try LiveServer.storeArguments(target)))
        #expect(again.status != 0 && again.output.contains("already holds users"), "only into a new store")

        let moved = try LiveServer(dataDirectory: target)
        #expect(
            try await moved.request("GET", Endpoints.conversations, token: bob).body == conversations,
            "the session and the list came along")
        #expect(
            try await moved.request(
                "GET", "\(Endpoints.conversations)/\(ConversationPayload.directID("alice", "bob"))/messages", token: bob
            ).body == history)
        let caughtUp = try await moved.request("GET", Endpoints.changes + "?cursor=\(cursor)", token: bob).decode(
            ChangelogPage.self)
        #expect(caughtUp.changes.isEmpty && caughtUp.cursor == cursor, "bob's cursor resumes where it was")
        let three = try await moved.send("three", from: alice, to: "bob")
        #expect(three.id > two.id, "ids continue after the imported ones")
        let next = try await moved.request("GET", Endpoints.changes + "?cursor=\(cursor)", token: bob).decode(
            ChangelogPage.self)
        #expect(next.changes.map { $0.message?.text } == ["three"])
        guard case .logs(_, let before, _)? = ChangelogCursor.parse(cursor) else {
            Issue.record("\(cursor)")
            return
        }
        #expect(next.changes.map(\.seq) == [before + 1])

        // Without --keep-epoch the new store's epoch stands: old cursors rebuild.
        let fresh = FileManager.default.temporaryDirectory.appendingPathComponent("chatd-test-\(UUID().uuidString)")
        #expect(try LiveServer.run(["import", dump] + (try LiveServer.storeArguments(fresh))).status == 0)
        let rebuilt = try LiveServer(dataDirectory: fresh)
        #expect(
            try await rebuilt.request("GET", Endpoints.changes + "?cursor=\(cursor)", token: bob).error?.code
                == .cursorExpired)
    }

    /// An export from before members kept their conversations' times: the import fills them
    /// in, and each list keeps its order, page after page. Their minutes are computed (not
    /// exported): the import writes none, even one the file names.
    @Test func anExportFromBeforeTheMembersTimesKeepsItsListsOrder() async throws {
        let source = try LiveServer(sqlite: true)
        let alice = try await source.user("alice")
        for peer in ["bob", "carol", "dave"] { _ = try await source.user(peer) }
        for peer in ["carol", "bob", "dave", "carol"] { try await source.send("to \(peer)", from: alice, to: peer) }
        let order = ["alice~carol", "alice~dave", "alice~bob"]
        func list(_ server: LiveServer) async throws -> [String] {  // a page a conversation, each from its position
            try await server.conversationIds(try await server.token("alice"), pageSize: 1)
        }
        #expect(try await list(source) == order)
        source.stop()
        let dump = source.dataDirectory.appendingPathComponent("export.jsonl")
        #expect(try LiveServer.run(["export", "--output", dump.path, "--data", source.dataDirectory.path]).status == 0)
        // As an older chatd wrote it: member rows without `updated_at`; and a minute of 0.
        let lines = try String(contentsOf: dump, encoding: .utf8).split(separator: "\n").map { line in
            guard var object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["table"] as? String == "conversation_members", var row = object["row"] as? [String: Any]
            else { return String(line) }
            #expect(row.removeValue(forKey: "updated_at") != nil)
            #expect(row["recency"] == nil, "a computed column stays out of the export")
            row["recency"] = 0
            object["row"] = row
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        try (lines.joined(separator: "\n") + "\n").write(to: dump, atomically: true, encoding: .utf8)
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("chatd-test-\(UUID().uuidString)")
        let imported = try LiveServer.run(["import", dump.path] + (try LiveServer.storeArguments(target)))
        #expect(imported.status == 0, "\(imported.output)")
        #expect(try await list(try LiveServer(dataDirectory: target)) == order)
    }

    @Test func anImportRefusesWhatIsNotAnExport() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "not-an-export-\(UUID().uuidString).jsonl")
        try Data(#"{"users":[]}"#.utf8).write(to: file)
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("chatd-test-\(UUID().uuidString)")
        let refused = try LiveServer.run(["import", file.path] + (try LiveServer.storeArguments(target)))
        #expect(refused.status != 0 && refused.output.contains("not a chatd export"), "\(refused.output)")
    }
}
