/// The realtime connection's settle and flap rules as a pure state machine: no I/O, time and
/// randomness passed in. A connection counts as settled once it has stayed up for the settle
/// delay; one that drops before that was a flap (nothing runs, and the next retry backs off
/// further). Only a settled connection resets the backoff.
struct Connectivity: Equatable, Sendable {
    enum Phase: Equatable, Sendable {
        case down
        case connecting
        /// Connection number `connection` opened at `since` (epoch ms), not settled yet.
        case up(connection: Int, since: Int64)
        case settled(connection: Int)
    }

    enum Effect: Equatable, Sendable {
        case none
        /// Check back at this time (epoch ms) whether connection `connection` settled.
        case settleCheck(connection: Int, at: Int64)
        /// The connection settled: flush the outbox, then sync.
        case settled
        /// Reconnect after this many milliseconds.
        case retry(after: Int64)
    }

    var settleDelay: Int64
    var backoffBase: Int64
    var backoffCap: Int64
    private(set) var phase = Phase.down
    /// Connections in a row that failed or dropped before settling.
    private(set) var failures = 0
    private var connections = 0

    init(settleDelay: Int64, backoffBase: Int64, backoffCap: Int64) {
        self.settleDelay = settleDelay
        self.backoffBase = backoffBase
        self.backoffCap = backoffCap
    }

    mutating func connecting() { phase = .connecting }

    mutating func opened(now: Int64) -> Effect {
        connections += 1
        phase = .up(connection: connections, since: now)
        return .settleCheck(connection: connections, at: now + settleDelay)
    }

    /// The settle check of `connection` is due (its timer waited the settle delay; the time
    /// is not checked again, so a clock stepping back cannot leave it unsettled); a check for
    /// a connection that already dropped (a flap) does nothing.
    mutating func settleDue(connection: Int, now: Int64) -> Effect {
        guard case .up(let current, _) = phase, current == connection else { return .none }
        phase = .settled(connection: connection)
        failures = 0
        return .settled
    }

    /// The connection (or the attempt) ended; `unit` in 0..<1 draws the jitter.
    mutating func dropped(unit: Double) -> Effect {
        let attempt = failures
        failures += 1
        phase = .down
        return .retry(after: Backoff.delay(attempt: attempt, base: backoffBase, cap: backoffCap, unit: unit))
    }
}
