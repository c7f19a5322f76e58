import Locking

/// A connection usable from any thread, one caller at a time (under a `Locked`, which does not
/// spin under contention the way `Synchronization.Mutex` does on small machines). The body is
/// non-escaping: callers never keep the connection.
public final class LockedConnection: Sendable {
    private let connection: Locked<Connection>

    public init(_ connection: Connection) { self.connection = Locked(connection) }

    public func withConnection<T>(_ body: (Connection) throws -> T) rethrows -> T {
        try connection.withLock { try body($0) }
    }
}
