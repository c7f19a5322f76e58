import Testing

@testable import OfflineChat

/// The outbox's retry rules, transition by transition.
@Suite struct OutboxPolicyTests {
    let policy = OutboxPolicy(maxAttempts: 3, baseDelay: 1_000, maxDelay: 60_000)

    @Test func aDueItemStartsSendingAndCountsTheAttempt() {
        #expect(policy.next(.pending(attempts: 0, notBefore: 100), .startSend(now: 100)) == .sending(attempts: 1))
        #expect(
            policy.next(.pending(attempts: 0, notBefore: 100), .startSend(now: 99))
                == .pending(attempts: 0, notBefore: 100),
            "not before its time")
    }

    @Test func successIsFinal() {
        #expect(policy.next(.sending(attempts: 1), .succeeded) == .sent)
        #expect(policy.next(.sent, .discarded) == .sent)
        #expect(policy.next(.sent, .failedPermanently) == .sent)
    }

    @Test func transientFailuresBackOffWithJitterThenGiveUp() {
        #expect(
            policy.next(.sending(attempts: 1), .failedTransiently(now: 10_000, unit: 0.5))
                == .pending(attempts: 1, notBefore: 10_500))
        #expect(
            policy.next(.sending(attempts: 2), .failedTransiently(now: 10_000, unit: 0.5))
                == .pending(attempts: 2, notBefore: 11_000))
        #expect(
            policy.next(.sending(attempts: 2), .failedTransiently(now: 10_000, unit: 0))
                == .pending(attempts: 2, notBefore: 10_001))
        #expect(
            policy.next(.sending(attempts: 3), .failedTransiently(now: 10_000, unit: 0.5)) == .failed(.transient),
            "after maxAttempts")
    }

    @Test func aRateLimitWaitsAsAskedAndUsesNoAttempt() {
        #expect(
            policy.next(.sending(attempts: 3), .throttled(now: 10_000, milliseconds: 30_000))
                == .pending(attempts: 2, notBefore: 40_000))
        #expect(
            policy.next(.sending(attempts: 1), .throttled(now: 0, milliseconds: 86_400_000))
                == .pending(attempts: 0, notBefore: 900_000),
            "a wait past 15 minutes is capped")
        #expect(
            policy.next(.pending(attempts: 0, notBefore: 5), .throttled(now: 0, milliseconds: 1))
                == .pending(attempts: 0, notBefore: 5),
            "only a send in flight is throttled")
    }

    @Test func permanentFailuresAreFinalUntilRetried() {
        #expect(policy.next(.sending(attempts: 1), .failedPermanently) == .failed(.permanent))
        #expect(policy.next(.failed(.permanent), .startSend(now: 1)) == .failed(.permanent))
        #expect(policy.next(.failed(.permanent), .retryRequested(now: 5)) == .pending(attempts: 0, notBefore: 5))
        #expect(policy.next(.failed(.transient), .retryRequested(now: 5)) == .pending(attempts: 0, notBefore: 5))
    }

    @Test func discardsWinOverEverythingButSuccess() {
        #expect(policy.next(.pending(attempts: 0, notBefore: 0), .discarded) == .failed(.discarded))
        #expect(policy.next(.sending(attempts: 1), .discarded) == .failed(.discarded))
        #expect(policy.next(.failed(.transient), .discarded) == .failed(.discarded))
        #expect(
            policy.next(.failed(.discarded), .retryRequested(now: 1)) == .failed(.discarded),
            "a discard is never retried")
    }

    @Test func aReconnectMakesWaitingItemsDue() {
        #expect(
            policy.next(.pending(attempts: 2, notBefore: 90_000), .reconnected(now: 1_000))
                == .pending(attempts: 2, notBefore: 1_000))
        #expect(policy.next(.failed(.permanent), .reconnected(now: 1_000)) == .failed(.permanent))
    }

    @Test func aRetryMakesAWaitingItemDueAndRetryAllOnlyRetriesTransientFailures() {
        #expect(
            policy.next(.pending(attempts: 2, notBefore: 90_000), .retryRequested(now: 1_000))
                == .pending(attempts: 2, notBefore: 1_000))
        #expect(
            policy.next(.pending(attempts: 2, notBefore: 90_000), .retryAllRequested(now: 1_000))
                == .pending(attempts: 2, notBefore: 1_000))
        #expect(
            policy.next(.failed(.transient), .retryAllRequested(now: 7)) == .pending(attempts: 0, notBefore: 7))
        #expect(policy.next(.failed(.permanent), .retryAllRequested(now: 7)) == .failed(.permanent))
        #expect(policy.next(.failed(.discarded), .retryAllRequested(now: 7)) == .failed(.discarded))
        #expect(policy.next(.sending(attempts: 1), .retryRequested(now: 7)) == .sending(attempts: 1), "on the wire")
    }

    @Test func aLostConnectionOrAnEndedProcessGivesTheAttemptBack() {
        #expect(
            policy.next(.sending(attempts: 3), .connectionLost(now: 500)) == .pending(attempts: 2, notBefore: 500),
            "not the message's fault")
        #expect(
            policy.next(.sending(attempts: 3), .interrupted) == .pending(attempts: 3, notBefore: 0),
            "the server may have it: the attempt counts, and it goes at once")
        #expect(policy.next(.pending(attempts: 1, notBefore: 9), .interrupted) == .pending(attempts: 1, notBefore: 9))
        #expect(policy.next(.failed(.transient), .connectionLost(now: 1)) == .failed(.transient))
    }

    @Test func eventsThatDoNotApplyChangeNothing() {
        #expect(policy.next(.pending(attempts: 0, notBefore: 0), .succeeded) == .pending(attempts: 0, notBefore: 0))
        #expect(policy.next(.sending(attempts: 1), .startSend(now: 1)) == .sending(attempts: 1))
    }
}
