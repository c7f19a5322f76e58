import Foundation
import OfflineChatLocking
import OfflineChatSQLite

/// Group commit: writes that arrive while another batch is committing wait, and the next
/// batch takes them all into one transaction (one commit, each user's head bumped once). The
/// first writer to find no batch under way leads; when its batch has committed, the oldest
/// waiting writer leads the next, so nobody commits other people's writes for long.
///
/// A batch whose transaction fails (one write refused, say) is rolled back and each of its
/// writes runs again alone, so a bad write fails by itself and the others still commit once.
final class GroupCommit: Sendable {
    /// One write waiting for its batch.
    final class Job: @unchecked Sendable {  // `outcome` is written before `wake` signals and read after it
        /// Where its batch runs it: jobs go in this order (their conversation), ties in arrival order.
        let order: String
        let body: (any SQLDatabase, inout [PublishedChange]) throws -> any Sendable
        var outcome: Result<any Sendable, any Error>?
        let wake = DispatchSemaphore(value: 0)

        init(order: String, _ body: @escaping (any SQLDatabase, inout [PublishedChange]) throws -> any Sendable) {
            self.order = order
            self.body = body
        }
    }

    /// Writes in one transaction at most.
    let maxBatch: Int
    private let state = Locked(State())

    private struct State {
        var waiting: [Job] = []
        /// A batch is being led: a new write waits to be carried or woken to lead the next.
        var leading = false
        /// Batches committed and the writes they carried, since start (`GET /metrics`).
        var batches = 0
        var writes = 0
    }

    init(maxBatch: Int = 64) { self.maxBatch = maxBatch }

    /// Batches and writes so far, read together.
    var counts: (batches: Int, writes: Int) { state.withLock { ($0.batches, $0.writes) } }

    /// Writes waiting for a batch now (for tests).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Runs `job` in a batch (`commit` commits one and sets each job's outcome) and returns its
    /// outcome.
    func run(_ job: Job, commit: ([Job]) -> Void) -> Result<any Sendable, any Error> {
        let follows = state.withLock { state in
            state.waiting.append(job)
            defer { state.leading = true }
            return state.leading
        }
        if follows {
            job.wake.wait()
            if let outcome = job.outcome { return outcome }  // a batch led by another carried it
            // Woken to lead the next batch: `leading` stayed true for it.
        }
        let batch = state.withLock {
            let batch = Array($0.waiting.prefix(maxBatch))
            $0.waiting.removeFirst(batch.count)
            $0.batches += 1
            $0.writes += batch.count
            return batch
        }

        commit(batch)
        state.withLock {
            if let next = $0.waiting.first { next.wake.signal() } else { $0.leading = false }
        }
        for other in batch where other !== job { other.wake.signal() }
        return job.outcome!
    }
}

extension Store {
    /// `write`, in a batch with whatever other such writes are waiting (`GroupCommit`). For
    /// writes that lock nothing but their conversation (before the heads, as every write does):
    /// a batch takes its writes in conversation order, so two batches never wait on each other
    /// in a circle.
    func writeTogether<T: Sendable>(
        conversation: String,
        _ body: @escaping (any SQLDatabase, inout [PublishedChange]) throws -> T
    ) throws -> T {
        let job = GroupCommit.Job(order: conversation) { db, changes in try body(db, &changes) }
        return try groupCommit.run(job) { batch in commitBatch(batch) }.get() as! T
    }

    /// Commits `batch` as one transaction; if that fails, each job alone.
    func commitBatch(_ batch: [GroupCommit.Job]) {
        if batch.count > 1 {
            let ordered = batch.enumerated().sorted { ($0.element.order, $0.offset) < ($1.element.order, $1.offset) }
                .map(\.element)
            if let results = try? write({ db, changes in try ordered.map { try $0.body(db, &changes) } }) {
                for (job, result) in zip(ordered, results) { job.outcome = .success(result) }
                return
            }
        }
        for job in batch { job.outcome = Result { try write { db, changes in try job.body(db, &changes) } } }
    }
}
