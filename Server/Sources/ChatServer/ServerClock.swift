import Foundation
import Synchronization

/// Where chatd reads the time (epoch milliseconds): token expiry, message and change times.
public protocol ServerClock: Sendable {
    func now() -> Int64
}

/// The wall clock.
public struct SystemClock: ServerClock {
    public init() {}
    public func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

/// The wall clock plus an offset that tests move forward (`chatd --test-clock` exposes it
/// as `POST /v1/admin/clock`), so expiry is tested without waiting.
public final class AdjustableClock: ServerClock {
    private let offset = Atomic<Int64>(0)
    private let base: any ServerClock

    public init(base: any ServerClock = SystemClock()) { self.base = base }

    public func now() -> Int64 { base.now() + offset.load(ordering: .acquiring) }

    /// Moves the clock forward by `milliseconds`.
    public func advance(by milliseconds: Int64) {
        offset.add(milliseconds, ordering: .acquiringAndReleasing)
    }
}
