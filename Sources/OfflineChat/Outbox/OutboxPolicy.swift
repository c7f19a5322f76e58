import OfflineChatCache

/// The outbox's retry rules as a pure state machine: no I/O, time passed in, randomness
/// passed in. Unit-tested transition by transition. Every change of a queued send goes through
/// it: `Outbox.apply` reads the item's state, asks `next`, and stores the answer.
struct OutboxPolicy: Sendable {
    enum State: Equatable, Sendable {
        /// Waiting; may be sent at `notBefore` (epoch ms) or later.
        case pending(attempts: Int, notBefore: Int64)
        /// On the wire: attempt number `attempts`.
        case sending(attempts: Int)
        case failed(MessageFailureReason)
        case sent
    }

    enum Event: Sendable {
        case startSend(now: Int64)
        case succeeded
        /// Network, timeout or 5xx; `unit` in 0..<1 draws the jitter.
        case failedTransiently(now: Int64, unit: Double)
        /// 4xx: retrying will not help.
        case failedPermanently
        /// 429 (or 503) with `Retry-After`: the server asks to wait `milliseconds`; the attempt
        /// does not count, since the message did nothing wrong.
        case throttled(now: Int64, milliseconds: Int64)
        case discarded
        /// `retryMessage`: a failed item goes again, a waiting one goes now.
        case retryRequested(now: Int64)
        /// `retryAllFailedMessages`: transient failures go again, waiting items go now.
        case retryAllRequested(now: Int64)
        /// The connection settled again: everything pending may go now.
        case reconnected(now: Int64)
        /// The connection went away during the send: not the message's fault, the attempt does
        /// not count.
        case connectionLost(now: Int64)
        /// The process ended during the send (found at the next start): it goes again at once.
        case interrupted
    }

    /// Attempts before a transiently failing message is reported failed (`.transient`).
    var maxAttempts = 6
    var baseDelay: Int64 = 1_000
    var maxDelay: Int64 = 60_000
    /// The longest `Retry-After` honoured: a server asking for more is retried after this.
    var maxThrottle: Int64 = 15 * 60_000

    /// The state after `event`, or the same state when the event does not apply.
    func next(_ state: State, _ event: Event) -> State {
        switch (state, event) {
        case (.pending(let attempts, let notBefore), .startSend(let now)) where now >= notBefore:
            return .sending(attempts: attempts + 1)
        case (.sending, .succeeded):
            return .sent
        case (.sending(let attempts), .failedTransiently(let now, let unit)):
            guard attempts < maxAttempts else { return .failed(.transient) }
            return .pending(
                attempts: attempts,
                notBefore: now + Backoff.delay(attempt: attempts - 1, base: baseDelay, cap: maxDelay, unit: unit))
        case (.sending(let attempts), .throttled(let now, let milliseconds)):
            return .pending(attempts: attempts - 1, notBefore: now + min(max(milliseconds, 0), maxThrottle))
        case (.sending, .failedPermanently):
            return .failed(.permanent)
        case (.pending, .discarded), (.sending, .discarded), (.failed, .discarded):
            return .failed(.discarded)
        case (.failed(let reason), .retryRequested(let now)) where reason != .discarded:
            return .pending(attempts: 0, notBefore: now)
        case (.failed(.transient), .retryAllRequested(let now)):
            return .pending(attempts: 0, notBefore: now)
        case (.pending(let attempts, _), .retryRequested(let now)),
            (.pending(let attempts, _), .retryAllRequested(let now)),
            (.pending(let attempts, _), .reconnected(let now)):
            return .pending(attempts: attempts, notBefore: now)
        case (.sending(let attempts), .connectionLost(let now)):
            return .pending(attempts: attempts - 1, notBefore: now)
        case (.sending(let attempts), .interrupted):
            return .pending(attempts: attempts, notBefore: 0)
        default:
            return state
        }
    }
}

extension OutboxPolicy.State {
    /// The state of a stored item.
    init(_ item: OutboxItem) {
        switch item.state {
        case .pending: self = .pending(attempts: item.attempts, notBefore: item.nextAttemptAt)
        case .sending: self = .sending(attempts: item.attempts)
        case .failed: self = .failed(item.reason ?? .transient)
        }
    }

    /// What to store for this state, reached by `item` (`error`: the one that failed it); nil
    /// for `.sent`, which removes the item instead (`ChatCache.completeSend`).
    func progress(of item: OutboxItem, error: ChatException?) -> OutboxProgress? {
        switch self {
        case .pending(let attempts, let notBefore):
            OutboxProgress(state: .pending, attempts: attempts, nextAttemptAt: notBefore)
        case .sending(let attempts):
            OutboxProgress(state: .sending, attempts: attempts)
        case .failed(let reason):
            OutboxProgress(
                state: .failed, attempts: item.attempts, failureReason: reason.rawValue, errorCode: error?.errorCode,
                errorMessage: error?.errorDescription)
        case .sent:
            nil
        }
    }
}

extension OutboxItem {
    /// Why a failed item failed.
    var reason: MessageFailureReason? { failureReason.flatMap(MessageFailureReason.init(rawValue:)) }
}
