import Foundation

/// Where the SDK reads time. Every timeout, backoff, settle delay and cooldown goes through
/// it, so tests drive time instead of sleeping (`ChatTesting.ManualClock`).
public protocol ChatClock: Sendable {
    /// Epoch milliseconds.
    func now() -> Int64
    /// Suspends for `milliseconds` of this clock's time; throws `CancellationError` when the
    /// task is cancelled.
    func sleep(milliseconds: Int64) async throws
}

/// The wall clock.
public struct SystemClock: ChatClock {
    /// The wall clock (`ChatConfig`'s default).
    public init() {}
    public func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
    public func sleep(milliseconds: Int64) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, milliseconds)) * 1_000_000)
    }
}
