import Foundation
import OfflineChatLocking
import OfflineChatSQLite

/// Moves the WAL into the database on a thread of its own. Left to SQLite, the commit that
/// crosses the WAL's size limit runs the checkpoint inside itself, under the writer's lock:
/// every send waiting for that lock waited for it (wrk's sends: p99 42–45 ms with the
/// automatic checkpoint, 8–10 ms without). The writer wakes this thread every
/// `commitsPerCheckpoint` commits; it runs a PASSIVE checkpoint (`DatabasePool.checkpoint`),
/// which blocks nobody. Only a WAL that is all in the database starts over at the next
/// commit, and under a steady stream of sends that pass never catches up: the WAL grew to the
/// automatic limit (400 MB), each commit appending to fresh file space. So once the WAL holds
/// `restartFrames`, the checkpoint also copies what was committed meanwhile, with the writer
/// held (1–4 ms under chatd-bench's sends, most of it the WAL's and the database's flushes;
/// every 5,500 sends or so at about 12 frames a send).
/// When the writes pause (`idle`), what they left is checkpointed whole the same way, so
/// reads go to the database file alone instead of looking up each page in the WAL's index.
/// The writer keeps SQLite's automatic checkpoint, at 400 MB, as a backstop.
final class Checkpointer: Sendable {
    /// A pass then copies a few hundred frames (a send writes a dozen pages), a shorter
    /// burst for the writer and the HTTP threads to share two cores with. At 64 commits,
    /// SQLite's own 1,000-page step, delivery's p99 in chatd-bench was 4.6–6.4 ms (median
    /// 5.9 of 8 runs); at 16, 4.1–6.6 ms (median 4.7), in turn with it.
    static let commitsPerCheckpoint = 16

    private struct State {
        var commits = 0
        /// `commits` when the last checkpoint began.
        var checkpointedThrough = 0
        var pending = false
        var stopped = false
    }

    /// Weak: the thread must not keep a store nobody closed open (its engine's deinit stops it).
    private weak let pool: DatabasePool?
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    /// `restartFrames` is the WAL's size, in frames, from which a checkpoint makes it start
    /// over (256 MB, the file's size on disk under steady writes): each start-over holds the
    /// writer 1–4 ms (the held pass, then a sync of the new WAL's header), whatever the size,
    /// so a larger WAL holds it less often. Sends that wait on one were a third of
    /// chatd-bench's slowest 1% at 64 MB; at 16 MB it lifted delivery's p99 by 2 ms. `idle`
    /// without a wake counts as the writes having paused. `checkpointed` hears
    /// each checkpoint's outcome (frames in the WAL, frames now in the database), on the
    /// checkpointer's thread; `betweenPasses` runs just before the pass with the writer held
    /// (tests commit there, as the writer does meanwhile under load).
    init(
        pool: DatabasePool, restartFrames: Int = 65_536, idle: DispatchTimeInterval = .seconds(1),
        checkpointed: @escaping @Sendable (Int, Int) -> Void = { _, _ in },
        betweenPasses: @escaping @Sendable () -> Void = {}
    ) {
        self.pool = pool
        Thread.detachNewThread { [self] in
            // The WAL's frames as the last held pass left it, all in the database.
            var heldThrough = -1
            while true {
                let paused = wake.wait(timeout: .now() + idle) == .timedOut
                let (stop, fresh) = state.withLock { state in
                    defer { (state.pending, state.checkpointedThrough) = (false, state.commits) }
                    return (state.stopped, state.commits != state.checkpointedThrough)
                }
                if stop { break }
                guard fresh, let pool = self.pool, var outcome = try? pool.checkpoint() else { continue }
                // Commits that woke it again during a held pass all came before that pass: the
                // WAL is still as it left it, and the writer's next commit starts it over.
                let startsOver = outcome == (heldThrough, heldThrough)
                if (paused || outcome.frames >= restartFrames) && !startsOver {
                    // Commits came in meanwhile (the outcome counts only the frames there were
                    // when it began): the rest is copied with the writer held, so the WAL is
                    // whole in the database and the next commit starts it over. Under load,
                    // a second pass first copies most of that rest, and the files are flushed
                    // after each: the held pass's own syncs of the WAL and the database then
                    // find little left to write (it held the writer 8 ms under wrk's sends, 3
                    // ms after).
                    if !paused {
                        try? pool.syncFiles()
                        outcome = (try? pool.checkpoint()) ?? outcome
                    }
                    try? pool.syncFiles()
                    betweenPasses()
                    outcome = (try? pool.withWriter { _ in try pool.checkpoint() }) ?? outcome
                    heldThrough = outcome.frames
                }
                checkpointed(outcome.frames, outcome.checkpointed)
            }
            done.signal()
        }
    }

    /// A commit happened (called under the writer's lock): every `commitsPerCheckpoint`-th
    /// wakes the thread, unless a checkpoint is already due.
    func committed() {
        let signal = state.withLock { state in
            state.commits += 1
            guard state.commits % Self.commitsPerCheckpoint == 0, !state.pending, !state.stopped else { return false }
            state.pending = true
            return true
        }
        if signal { wake.signal() }
    }

    /// Stops the thread and returns once it has (before the pool closes).
    func stop() {
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        wake.signal()
        done.wait()
    }
}
