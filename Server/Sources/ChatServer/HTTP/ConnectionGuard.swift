import CMicroHTTPD
import Foundation
import Locking

/// Keeps slow or silent clients from holding every connection (slowloris: a thousand sockets
/// sending a header byte every 20 s made chatd unreachable). Each connection is tracked from
/// its start: one still sending its request head after `headerTimeout` seconds is cut, and
/// when `maxConnections` are open a new one makes room by cutting the oldest that is still
/// sending its head (or, if none is, is itself refused). Connections busy with a request, or
/// upgraded to realtime, are never cut here (realtime has its own per-user cap and heartbeat).
///
/// Called from libmicrohttpd's threads; a connection is cut by shutting its socket down, which
/// the library then closes as any failed connection.
final class ConnectionGuard: Sendable {
    enum Stage {
        /// Reading a request head since this moment (monotonic nanoseconds).
        case head(since: UInt64)
        case busy
        case upgraded
    }

    struct Entry {
        let fd: Int32
        var stage: Stage
    }

    let maxConnections: Int
    let headerTimeout: TimeInterval
    private let connections = Locked<[Int: Entry]>([:])
    private let watching = Locked(true)

    init(maxConnections: Int, headerTimeout: TimeInterval) {
        self.maxConnections = maxConnections
        self.headerTimeout = headerTimeout
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func started(_ connection: OpaquePointer) {
        let fd = chatd_mhd_connection_fd(connection)
        connections.withLock { connections in
            connections[Int(bitPattern: connection)] = Entry(fd: fd, stage: .head(since: Self.now()))
            guard connections.count > maxConnections else { return }
            // Full: the oldest connection still sending its head goes (the new one, if none).
            let oldest = connections.filter { if case .head = $0.value.stage { true } else { false } }
                .min { Self.since($0.value) < Self.since($1.value) }
            cut(oldest?.value.fd ?? fd)
        }
    }

    func requestBegan(_ connection: OpaquePointer?) { set(connection, .busy) }
    /// The connection waits for its next request head (keep-alive).
    func requestEnded(_ connection: OpaquePointer?) { set(connection, .head(since: Self.now())) }
    func upgraded(_ connection: OpaquePointer?) { set(connection, .upgraded) }

    func closed(_ connection: OpaquePointer) {
        _ = connections.withLock { $0.removeValue(forKey: Int(bitPattern: connection)) }
    }

    /// Cuts, once a second, connections that have been sending a head for too long.
    func watch() {
        Thread.detachNewThread { [self] in
            while watching.current {
                Thread.sleep(forTimeInterval: min(1, headerTimeout / 2))
                let limit = UInt64(headerTimeout * 1e9)
                connections.withLock { connections in
                    let now = Self.now()
                    for entry in connections.values where Self.isStale(entry, now: now, limit: limit) { cut(entry.fd) }
                }
            }
        }
    }

    func stopWatching() { watching.withLock { $0 = false } }

    private func set(_ connection: OpaquePointer?, _ stage: Stage) {
        guard let connection else { return }
        connections.withLock { connections in
            guard connections[Int(bitPattern: connection)] != nil else { return }
            if case .upgraded = connections[Int(bitPattern: connection)]!.stage { return }
            connections[Int(bitPattern: connection)]!.stage = stage
        }
    }

    /// Sending its head for longer than `limit`. A head that began after `now` was read (another
    /// thread stamped it first) is not stale: `now - since` would wrap.
    static func isStale(_ entry: Entry, now: UInt64, limit: UInt64) -> Bool {
        guard case .head(let since) = entry.stage, now > since else { return false }
        return now - since > limit
    }

    private static func since(_ entry: Entry) -> UInt64 {
        if case .head(let since) = entry.stage { since } else { .max }
    }

    /// Under the lock of `connections`: the library closes the connection once its socket fails.
    private func cut(_ fd: Int32) {
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
    }
}

let connectionNotifier: MHD_NotifyConnectionCallback = { cls, connection, _, code in
    guard let cls, let connection else { return }
    let server = Unmanaged<MicroHTTPServer>.fromOpaque(cls).takeUnretainedValue()
    if code == .CONNECTION_NOTIFY_STARTED {
        server.connections.started(connection)
    } else {
        server.connections.closed(connection)
    }
}
