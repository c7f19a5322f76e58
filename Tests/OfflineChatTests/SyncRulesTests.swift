import Testing

@testable import OfflineChat

/// The settle and flap rules of the connection, and the sync throttle: transition by transition.
@Suite struct ConnectivityTests {
    func rules() -> Connectivity { Connectivity(settleDelay: 2_500, backoffBase: 500, backoffCap: 30_000) }

    @Test func aConnectionThatStaysUpForTheSettleDelaySettlesOnce() {
        var rules = rules()
        rules.connecting()
        #expect(rules.phase == .connecting)
        #expect(rules.opened(now: 1_000) == .settleCheck(connection: 1, at: 3_500))
        #expect(rules.settleDue(connection: 1, now: 3_500) == .settled)
        #expect(rules.phase == .settled(connection: 1))
        #expect(rules.settleDue(connection: 1, now: 9_000) == .none, "settles only once")
    }

    @Test func aFlapNeverSettlesAndBacksOffFurther() {
        var rules = rules()
        _ = rules.opened(now: 0)
        #expect(rules.dropped(unit: 0.999_999) == .retry(after: 499), "first retry: up to the base delay")
        #expect(rules.settleDue(connection: 1, now: 2_500) == .none, "the check of a dropped connection does nothing")
        _ = rules.opened(now: 3_000)
        #expect(rules.dropped(unit: 0.999_999) == .retry(after: 999), "a second flap doubles the ceiling")
        #expect(rules.dropped(unit: 0.999_999) == .retry(after: 1_999), "so does a failed attempt")
        #expect(rules.failures == 3)
    }

    @Test func aStaleCheckOfAnEarlierConnectionDoesNotSettleANewOne() {
        var rules = rules()
        _ = rules.opened(now: 0)
        _ = rules.dropped(unit: 0)
        #expect(rules.opened(now: 2_000) == .settleCheck(connection: 2, at: 4_500))
        #expect(rules.settleDue(connection: 1, now: 2_600) == .none, "connection 1's timer fired late")
        #expect(rules.settleDue(connection: 2, now: 4_500) == .settled)
    }

    @Test func onlyASettledConnectionResetsTheBackoff() {
        var rules = rules()
        #expect(rules.dropped(unit: 0) == .retry(after: 1), "even a zero draw waits on the clock")
        for _ in 0..<4 { _ = rules.dropped(unit: 0) }
        _ = rules.opened(now: 0)
        _ = rules.settleDue(connection: 1, now: 2_500)
        #expect(rules.failures == 0)
        #expect(rules.dropped(unit: 0.999_999) == .retry(after: 499))
    }

    @Test func theBackoffIsCapped() {
        var rules = rules()
        var last = Connectivity.Effect.none
        for _ in 0..<40 { last = rules.dropped(unit: 0.999_999) }
        #expect(last == .retry(after: 29_999))
    }
}

@Suite struct SyncThrottleTests {
    @Test func aReconnectStartsASweepAndOverlappingOnesCoalesceIntoOneFollowUp() {
        var throttle = SyncThrottle()
        #expect(throttle.request(.reconnect, now: 0) == .start)
        #expect(throttle.request(.reconnect, now: 10) == .followUpQueued)
        #expect(throttle.request(.reconnect, now: 20) == .coalesced)
        #expect(throttle.finished(now: 100) == true, "the follow-up starts at once")
        #expect(throttle.running)
        #expect(throttle.finished(now: 200) == false)
        #expect(!throttle.running)
    }

    @Test func aManualSyncIsRefusedWhileOneRuns() {
        var throttle = SyncThrottle()
        _ = throttle.request(.reconnect, now: 0)
        #expect(throttle.request(.manual, now: 5) == .rejectedInProgress)
        #expect(!throttle.followUp, "a refused manual sync queues nothing")
    }

    @Test func aManualSyncIsRefusedForFifteenSecondsAfterOneEnded() {
        var throttle = SyncThrottle()
        #expect(throttle.request(.manual, now: 0) == .start)
        _ = throttle.finished(now: 1_000)
        #expect(throttle.request(.manual, now: 1_000) == .rejectedCooldown(remaining: 15_000))
        #expect(throttle.request(.manual, now: 15_999) == .rejectedCooldown(remaining: 1))
        #expect(throttle.request(.manual, now: 16_000) == .start, "the boundary is open")
    }

    @Test func aReconnectIsNotHeldBackByTheCooldown() {
        var throttle = SyncThrottle()
        _ = throttle.request(.manual, now: 0)
        _ = throttle.finished(now: 1_000)
        #expect(throttle.request(.reconnect, now: 2_000) == .start, "changes may have been missed while offline")
    }

    @Test func aRebuildFoundDuringASweepRunsRightAfterItEvenWithinTheManualCooldown() {
        var throttle = SyncThrottle()
        #expect(throttle.request(.manual, now: 0) == .start)
        #expect(throttle.request(.rebuild, now: 10) == .followUpQueued, "the sweep that found out is still running")
        #expect(throttle.finished(now: 20) == true, "the cold start follows at once")
        #expect(throttle.finished(now: 30) == false)
        #expect(throttle.request(.rebuild, now: 40) == .start, "no cooldown for a rebuild")
        #expect(throttle.request(.reconnect, now: 50) == .followUpQueued)
        #expect(throttle.request(.rebuild, now: 60) == .coalesced, "one follow-up does both")
    }

    @Test func aRetryOfAFailedSweepIsNotHeldBackByTheCooldown() {
        var throttle = SyncThrottle()
        _ = throttle.request(.manual, now: 0)
        _ = throttle.finished(now: 1_000)
        #expect(throttle.request(.retry, now: 1_500) == .start)
        #expect(throttle.request(.manual, now: 1_600) == .rejectedInProgress)
    }

    @Test func theFirstManualSyncHasNoCooldown() {
        var throttle = SyncThrottle()
        #expect(throttle.request(.manual, now: 0) == .start)
    }
}

@Suite struct LiveFollowingTests {
    @Test func aHelloAtTheSyncPointIsFollowedAtOnceAndADisconnectStopsIt() {
        var live = LiveFollowing()
        live.hello(atSyncPoint: true)
        #expect(live.following)
        live.disconnected()
        #expect(!live.following && !live.connected)
    }

    @Test func aHelloPastTheSyncPointWaitsForASweepThatStartedAfterIt() {
        var live = LiveFollowing()
        let before = live.generation
        live.hello(atSyncPoint: false)
        #expect(!live.following, "changes were missed before this hello")
        live.caughtUp(startedAt: before)
        #expect(!live.following, "that sweep read the changelog before the hello: it may end short of it")
        live.caughtUp(startedAt: live.generation)
        #expect(live.following)
    }

    @Test func aSweepThatCaughtUpOnAnEarlierConnectionOrOfflineStartsNothing() {
        var live = LiveFollowing()
        live.hello(atSyncPoint: false)
        let started = live.generation
        live.disconnected()
        live.hello(atSyncPoint: false)
        live.caughtUp(startedAt: started)
        #expect(!live.following)
        live.disconnected()
        live.caughtUp(startedAt: live.generation)
        #expect(!live.following, "offline there is no stream to follow")
    }

    @Test func losingTrackStopsFollowingUntilASweepThatStartsAfterItCatchesUp() {
        var live = LiveFollowing()
        live.hello(atSyncPoint: true)
        let running = live.generation
        live.lostTrack()
        #expect(!live.following && live.connected)
        live.caughtUp(startedAt: running)
        #expect(!live.following, "that sweep's page may predate the change the cache lacks")
        live.caughtUp(startedAt: live.generation)
        #expect(live.following)
    }
}
