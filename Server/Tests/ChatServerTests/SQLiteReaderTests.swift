import Foundation
import OfflineChatProtocol
import Testing

@testable import ChatServer

/// chatd's SQLite readers read the database file through a memory map (`SQLiteEngine`): a
/// mapped reader must still see every commit, whether it is in the WAL or already checkpointed
/// into the file beneath the map.
struct SQLiteReaderTests {
    @Test func mappedReadersSeeEveryCommitBeforeAndAfterACheckpoint() throws {
        let store = try GroupCommitTests.store("sqlite")
        let mapped: Int64? = try store.read { try $0.scalar("PRAGMA mmap_size") }
        #expect(mapped == 1 << 30)
        let engine = try #require(store.engine as? SQLiteEngine)
        for uid in ["ann", "ben"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        for n in 0..<40 {
            let (sent, _) = try store.send(
                from: "ann",
                SendMessageRequest(muid: "m\(n)", receiver: "ben", text: String(repeating: "x", count: 900)))
            if n % 8 == 7 {
                // The WAL into the file and started over: the next reads come from the map.
                try engine.pool.withWriter { try $0.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
            }
            var query = MessageQuery(scope: .conversation(sent.conversationId))
            query.limit = 1
            let page = try JSONDecoder().decode(
                [MessagePayload].self, from: Data(try store.messages(query, for: "ben").bytes))
            #expect(page.map(\.id) == [sent.id], "after send \(n)")
        }
    }
}
