import Foundation
import OfflineChatProtocol
import OfflineChatSQLite
import OfflineChatServerProcess
import Testing

@testable import ChatServer

/// Group commit (`GroupCommit`, `Store.writeTogether`): sends that wait while a batch commits
/// go together in the next one, a refused send fails alone, and every send commits once.
struct GroupCommitTests {
    /// The writes that queued while the first batch was committing come as the second batch,
    /// led by the oldest of them, and every writer gets its own outcome.
    @Test func writesWaitingDuringACommitGoTogetherInTheNext() throws {
        let group = GroupCommit()
        let batches = Shared<[[String]]>([])
        let firstCommitting = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        func submit(_ name: String) -> Joinable {
            PositionTests.thread { () throws -> Void in
                let job = GroupCommit.Job(order: name) { _, _ in name + " done" }
                let outcome = group.run(job) { batch in
                    let names = batch.map(\.order)
                    batches.withLock { $0.append(names) }
                    if names == ["first"] {
                        firstCommitting.signal()
                        release.wait()
                    }
                    for job in batch { job.outcome = .success(job.order + " done") }
                }
                #expect(try outcome.get() as? String == name + " done")
            }
        }
        let first = submit("first")
        firstCommitting.wait()
        let waiters = (1...5).map { submit("w\($0)") }
        // The five are queued behind the committing batch (a spin with a deadline, not a sleep).
        let deadline = Date().addingTimeInterval(10)
        while group.waitingCount < 5 && Date() < deadline { sched_yield() }
        #expect(group.waitingCount == 5)
        release.signal()
        for thread in [first] + waiters { try thread.join() }
        let seen = batches.withLock { $0 }
        #expect(seen.count == 2)
        #expect(seen.first == ["first"])
        #expect(
            Set(seen.last ?? []) == Set((1...5).map { "w\($0)" }),
            "one batch of the five, whatever order they queued in")
        #expect(group.waitingCount == 0)
    }

    static let engines: [String] = ["sqlite"] + (LiveServer.postgres == nil ? [] : ["postgresql"])

    /// A fresh store on `engine` (a database of its own), on `clock`.
    static func store(_ engine: String, clock: any ServerClock = SystemClock()) throws -> Store {
        if engine == "postgresql" {
            return try Store(postgres: try ServerProcess.createDatabase(on: LiveServer.postgres!), clock: clock)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "group-commit-\(UUID().uuidString)")
        return try Store(directory: directory, clock: clock)
    }

    /// A batch of three sends, the middle one to a user who blocked the sender: the batch's
    /// transaction is refused, each send runs again alone, and only the blocked one fails.
    @Test(arguments: engines) func aRefusedSendInABatchFailsAloneAndTheOthersCommitOnce(engine: String) throws {
        let store = try Self.store(engine)
        for uid in ["ann", "ben", "cat"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        _ = try store.setBlock("ann", by: "cat", blocking: true)
        let sends = [("ann", "ben", "one"), ("ann", "cat", "blocked"), ("ben", "ann", "two")]
        let jobs = sends.map { from, to, text in
            GroupCommit.Job(order: ConversationPayload.directID(from, to)) { db, changes in
                try store.sendBody(
                    db, from: from, SendMessageRequest(muid: text, receiver: to, text: text), into: &changes)
            }
        }
        let before = try ["ann", "ben", "cat"].map { try store.position(of: $0) }  // the block was a change too
        store.commitBatch(jobs)
        #expect(throws: (any Error).self) { try jobs[1].outcome!.get() }
        #expect((try? jobs[1].outcome!.get()) == nil)
        for index in [0, 2] {
            #expect((try jobs[index].outcome!.get() as? Store.Sent)?.created == true)
        }
        let page = try store.messages(
            MessageQuery(scope: .conversation(ConversationPayload.directID("ann", "ben"))), for: "ann")
        let texts = try JSONDecoder().decode([MessagePayload].self, from: Data(page.bytes)).compactMap(\.text)
        #expect(texts.sorted() == ["one", "two"])
        let after = try ["ann", "ben", "cat"].map { try store.position(of: $0) }
        #expect(
            zip(after, before).map { $0 - $1 } == [2, 2, 0], "one change per stored message for each of its two readers"
        )
    }

    /// Eight threads send at once, each message twice (a client's retry): each is stored once,
    /// created once, and every user's changelog holds exactly their messages' changes.
    @Test(arguments: engines) func concurrentSendsCommitOnceWhateverTheBatches(engine: String) throws {
        let store = try Self.store(engine)
        let uids = (0..<4).map { "u\($0)" }
        for uid in uids { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        let created = Shared<Int>(0)
        let threads = (0..<8).map { worker in
            PositionTests.thread { () throws -> Void in
                for index in 0..<30 {
                    let request = SendMessageRequest(
                        muid: "w\(worker)-\(index)", receiver: uids[(worker + 1) % 4], text: "hi \(index)")
                    for _ in 0..<2 where try store.send(from: uids[worker % 4], request).created {
                        created.withLock { $0 += 1 }
                    }
                }
            }
        }
        for thread in threads { try thread.join() }
        #expect(created.withLock { $0 } == 240)
        for uid in uids {
            // Each user sent 60 and received 60: 120 changes, positions 1…120.
            #expect(try store.position(of: uid) == 120)
            let page = try store.changes(
                for: uid, cursor: ChangelogCursor.encode(epoch: store.epoch, position: 0, groups: [:]), limit: 1000)
            #expect(page.count == 120)
        }
    }
}
