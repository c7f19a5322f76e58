import Testing

@testable import ChatServer

/// The head-timeout rule on its own. The watcher reads the time, then another thread stamps a
/// new head a moment later: that head is younger than the watcher's "now", never 584 years old
/// (`now - since` wrapped and crashed chatd under load before).
struct ConnectionGuardTests {
    let limit: UInt64 = 10_000_000_000

    @Test func aHeadIsStaleOnlyAfterTheLimit() {
        let head = ConnectionGuard.Entry(fd: 3, stage: .head(since: 1_000))
        #expect(!ConnectionGuard.isStale(head, now: 1_000 + limit, limit: limit))
        #expect(ConnectionGuard.isStale(head, now: 1_001 + limit, limit: limit))
    }

    @Test func aHeadStampedAfterTheWatchersNowIsNotStale() {
        let head = ConnectionGuard.Entry(fd: 3, stage: .head(since: 5_000))
        #expect(!ConnectionGuard.isStale(head, now: 4_999, limit: limit))
    }

    @Test func busyAndUpgradedConnectionsAreNeverStale() {
        for stage in [ConnectionGuard.Stage.busy, .upgraded] {
            #expect(!ConnectionGuard.isStale(.init(fd: 3, stage: stage), now: .max, limit: limit))
        }
    }
}
