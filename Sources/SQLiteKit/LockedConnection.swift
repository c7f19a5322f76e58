import Foundation

/// A connection usable from any thread, one caller at a time (a plain lock: it does not spin
/// under contention the way `Synchronization.Mutex` does on small machines).
///
/// `@unchecked Sendable` is safe because the connection is private, touched only inside
/// `withConnection` while `lock` is held, and the body is non-escaping (callers never keep it).
public final class LockedConnection: @unchecked Sendable {
    private let lock = NSLock()
    private let connection: Connection

    public init(_ connection: Connection) { self.connection = connection }

    public func withConnection<T>(_ body: (Connection) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(connection)
    }
}
