import Foundation

/// A value behind a lock, usable from any thread: the one lock primitive of the SDK and of
/// chatd.
///
/// A plain pthread mutex (`NSLock`), not `Synchronization.Mutex`: on Linux the latter spins and
/// then parks on a priority-inheritance futex, and with more threads than cores (chatd runs 16
/// request threads on 2 cores) a waiter that spins while the holder is descheduled burns its
/// slice. `lock-bench` (docs/PERFORMANCE.md, "One lock") measures both: with 8 or more threads
/// on 2 cores `Mutex` took 6–27 µs per locked update, this lock 0.15 µs.
///
/// The body runs under the lock: keep it short, never await or block in it, and do not lock the
/// same value again inside it (the lock is not recursive).
public final class Locked<Value>: @unchecked Sendable {  // `value` is only touched under `lock`
    private let lock = NSLock()
    private var value: Value

    /// A lock guarding `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock, and returns what it returns.
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value, read under the lock.
    public var current: Value { withLock { $0 } }
}
