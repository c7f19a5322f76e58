import Testing

@testable import ChatServer

/// The guard's rules on their own, on a clock of their own (nanoseconds). The watcher reads
/// the time, then another thread stamps a new head a moment later: that head is younger than
/// the watcher's "now", never 584 years old (`now - since` wrapped and crashed chatd under load
/// before).
struct ConnectionGuardTests {
    let second: UInt64 = 1_000_000_000
    let limits = ConnectionGuard.Limits(headerTimeout: 10, bodyTimeout: 10, minimumBodyRate: 1024)

    func stale(_ stage: ConnectionGuard.Stage, at now: UInt64) -> Bool {
        ConnectionGuard.isStale(.init(fd: 3, stage: stage), now: now, limits: limits)
    }

    @Test func aHeadIsStaleOnlyAfterTheLimit() {
        #expect(!stale(.head(since: 1_000), at: 1_000 + 10 * second))
        #expect(stale(.head(since: 1_000), at: 1_001 + 10 * second))
    }

    @Test func aHeadStampedAfterTheWatchersNowIsNotStale() {
        #expect(!stale(.head(since: 5_000), at: 4_999))
        #expect(!stale(.body(since: 5_000, received: 0, lastByte: 5_000, known: false), at: 4_999))
    }

    @Test func busyAndUpgradedConnectionsAreNeverStale() {
        for stage in [ConnectionGuard.Stage.busy, .upgraded] { #expect(!stale(stage, at: .max)) }
    }

    /// The second review's probe: a whole head, then a body a byte every 5 s. Each byte comes
    /// well inside the body timeout, but past it the body averages far below the least rate:
    /// cut at the timeout, not never.
    @Test func aTrickledBodyIsCutOnceItHasTakenTheTimeout() {
        let start: UInt64 = 1_000
        func trickled(at seconds: UInt64) -> ConnectionGuard.Stage {
            .body(since: start, received: Int(seconds / 5), lastByte: start + seconds / 5 * 5 * second, known: true)
        }
        #expect(!stale(trickled(at: 9), at: start + 9 * second), "inside the timeout a body may be slow")
        #expect(stale(trickled(at: 11), at: start + 11 * second), "a byte every 5 s is far below 1 KiB/s")
        // A body that keeps the rate may take as long as it needs (a photo on a slow link).
        let steady = ConnectionGuard.Stage.body(
            since: start, received: 300 * 2048, lastByte: start + 300 * second, known: false)
        #expect(!stale(steady, at: start + 300 * second))
    }

    @Test func aBodyThatStopsIsCutAfterTheTimeout() {
        let stopped = ConnectionGuard.Stage.body(since: 0, received: 1 << 20, lastByte: second, known: true)
        #expect(!stale(stopped, at: 11 * second))
        #expect(stale(stopped, at: 11 * second + 1), "nothing for ten seconds")
    }

    /// Room for a new connection: the oldest head first, then the slowest body of a client not
    /// known here, never a known client's body, a busy request or a realtime socket.
    @Test func roomIsMadeFromHeadsThenStrangersBodies() {
        typealias Entry = ConnectionGuard.Entry
        let now = 100 * second
        var connections: [Int: Entry] = [
            1: Entry(fd: 11, stage: .busy), 2: Entry(fd: 12, stage: .upgraded),
            3: Entry(fd: 13, stage: .body(since: 0, received: 10, lastByte: now, known: true)),
            4: Entry(fd: 14, stage: .body(since: 0, received: 5_000, lastByte: now, known: false)),
            5: Entry(fd: 15, stage: .body(since: 0, received: 50, lastByte: now, known: false)),
            6: Entry(fd: 16, stage: .head(since: 20 * second)), 7: Entry(fd: 17, stage: .head(since: 10 * second)),
            8: Entry(fd: 18, stage: .head(since: now))
        ]
        func victim() -> Int32? { ConnectionGuard.victim(among: connections, arriving: 8, now: now)?.fd }
        #expect(victim() == 17, "the oldest head other than the newcomer's")
        connections[6] = nil
        connections[7] = nil
        #expect(victim() == 15, "then the slowest stranger's body")
        connections[5] = nil
        connections[4] = nil
        #expect(victim() == nil, "never a known client's body: the newcomer is refused")
    }
}
