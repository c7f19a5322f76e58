import Foundation

/// A value behind a lock, usable from any thread. (A plain lock: `Synchronization.Mutex`
/// spins badly under contention on small machines; see docs/PERFORMANCE.md.)
final class Locked<Value>: @unchecked Sendable {  // `value` is only touched under `lock`
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}
