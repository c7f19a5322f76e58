import Testing

@testable import OfflineChat

@Suite struct BackoffTests {
    @Test func theCeilingDoublesUpToTheCap() {
        #expect(Backoff.delay(attempt: 0, base: 500, cap: 30_000, unit: 0.999_999) == 499)
        #expect(Backoff.delay(attempt: 1, base: 500, cap: 30_000, unit: 0.5) == 500)
        #expect(Backoff.delay(attempt: 3, base: 500, cap: 30_000, unit: 1) == 4_000)
        #expect(Backoff.delay(attempt: 10, base: 500, cap: 30_000, unit: 1) == 30_000)
        #expect(Backoff.delay(attempt: 1_000, base: 500, cap: 30_000, unit: 1) == 30_000, "no overflow")
    }

    @Test func fullJitterSpansOneMillisecondToTheCeiling() {
        #expect(Backoff.delay(attempt: 4, base: 500, cap: 30_000, unit: 0) == 1, "never a retry in the same instant")
        #expect(Backoff.delay(attempt: 0, base: 500, cap: 30_000, unit: 0.001) == 1)
        #expect(Backoff.delay(attempt: 4, base: 500, cap: 30_000, unit: -1) == 1)
        #expect(Backoff.delay(attempt: 4, base: 500, cap: 30_000, unit: 2) == 8_000)
    }
}
