/// A realtime socket's allowance for typing frames, on the loop's monotonic clock: `burst` at
/// once, then `perSecond`. A frame past it is dropped (typing is a hint: nothing is lost), and a
/// socket that keeps sending while it is empty (`abuse` frames dropped since the last one let
/// through) is closed. Before, 1,000 frames to a 100-member group made 99,000 bus messages.
struct TypingBudget {
    static let perSecond = 4.0
    static let burst = 10.0
    static let abuse = 200

    private var tokens = Self.burst
    private var updated: UInt64?
    private var dropped = 0

    enum Verdict: Equatable {
        case send
        case drop
        /// Dropped, and the socket is closed (1008).
        case close
    }

    /// Takes one frame's allowance at `now` (nanoseconds).
    mutating func take(at now: UInt64) -> Verdict {
        if let updated, now > updated {
            tokens = min(Self.burst, tokens + Double(now - updated) / 1e9 * Self.perSecond)
        }
        updated = max(updated ?? now, now)
        guard tokens >= 1 else {
            dropped += 1
            return dropped >= Self.abuse ? .close : .drop
        }
        tokens -= 1
        dropped = 0
        return .send
    }
}
