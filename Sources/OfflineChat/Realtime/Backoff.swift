/// Reconnect delays: exponential with full jitter (a uniformly random delay up to the
/// exponential ceiling), so many clients coming back at once spread out.
enum Backoff {
    /// The delay before retry number `attempt` (0 for the first retry), in milliseconds, at
    /// least 1: a retry never comes in the same instant as the failure (no hot loop, and an
    /// injected clock always sees it wait; a zero draw used to retry at once, so a test
    /// waiting on the manual clock for the backoff waited for a sleeper that never came).
    /// `unit` is a random number in 0..<1.
    static func delay(attempt: Int, base: Int64, cap: Int64, unit: Double) -> Int64 {
        let ceiling = min(cap, base << Int64(min(attempt, 30)))
        return max(1, Int64((Double(ceiling) * min(max(unit, 0), 1)).rounded(.down)))
    }
}
