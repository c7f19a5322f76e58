import CMicroHTTPD
import Foundation
import OfflineChatLocking

/// Keeps slow or silent clients from holding every connection (slowloris: a thousand sockets
/// sending a header byte every 20 s made chatd unreachable; then the same with a whole head and
/// a body trickled a byte every 5 s). Each connection is tracked from its start:
/// - one still sending its request head after `limits.headerTimeout` seconds is cut;
/// - one sending a body is cut when no byte came for `limits.bodyTimeout` seconds, or when,
///   past that time, it averages less than `limits.minimumBodyRate` bytes a second (as nginx's
///   `client_body_timeout`, plus a rate, which a trickle cannot meet);
/// - when `maxConnections` are open, a new one makes room by cutting the oldest that is still
///   sending its head, else the slowest body of a client this node cannot name (no token it
///   vouched for lately, no admin key), else it is itself refused.
/// Connections busy with a request, or upgraded to realtime, are never cut here (realtime has
/// its own per-user cap and heartbeat).
///
/// Called from libmicrohttpd's threads; a connection is cut by shutting its socket down, which
/// the library then closes as any failed connection.
final class ConnectionGuard: Sendable {
    enum Stage: Equatable {
        /// Reading a request head since this moment (monotonic nanoseconds).
        case head(since: UInt64)
        /// Reading a body since `since`: `received` bytes so far, the last at `lastByte`;
        /// `known`: its request carries credentials this node vouched for lately.
        case body(since: UInt64, received: Int, lastByte: UInt64, known: Bool)
        case busy
        case upgraded
    }

    struct Entry {
        let fd: Int32
        var stage: Stage
    }

    /// How long heads and bodies may take.
    struct Limits: Sendable {
        var headerTimeout: TimeInterval = 10
        var bodyTimeout: TimeInterval = 10
        /// Bytes a second a body must average once it has taken `bodyTimeout`.
        var minimumBodyRate = 1024
    }

    let maxConnections: Int
    let limits: Limits
    private let connections = Locked<[Int: Entry]>([:])
    private let watching = Locked(true)

    init(maxConnections: Int, limits: Limits) {
        self.maxConnections = maxConnections
        self.limits = limits
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func started(_ connection: OpaquePointer) {
        let fd = chatd_mhd_connection_fd(connection)
        connections.withLock { connections in
            let key = Int(bitPattern: connection)
            connections[key] = Entry(fd: fd, stage: .head(since: Self.now()))
            guard connections.count > maxConnections else { return }
            cut(Self.victim(among: connections, arriving: key, now: Self.now())?.fd ?? fd)
        }
    }

    /// Who makes room for the connection `arriving`: the oldest other connection still sending
    /// its head, else the slowest body of a client not known here; nil: nobody (refuse it).
    static func victim(among connections: [Int: Entry], arriving: Int, now: UInt64) -> Entry? {
        let others = connections.filter { $0.key != arriving }.values
        let heads = others.compactMap { entry -> (Entry, UInt64)? in
            if case .head(let since) = entry.stage { (entry, since) } else { nil }
        }
        if let oldest = heads.min(by: { $0.1 < $1.1 }) { return oldest.0 }
        let strangers = others.compactMap { entry -> (Entry, Double)? in
            guard case .body(let since, let received, _, false) = entry.stage else { return nil }
            return (entry, Double(received) / Double(max(1, now &- since)))
        }
        return strangers.min { $0.1 < $1.1 }?.0
    }

    func requestBegan(_ connection: OpaquePointer?) { set(connection, .busy) }
    /// A request whose head is in and whose body is coming; `known`: see `Stage.body`.
    func bodyBegan(_ connection: OpaquePointer?, known: Bool) {
        let now = Self.now()
        set(connection, .body(since: now, received: 0, lastByte: now, known: known))
    }
    /// `count` more bytes of the body came.
    func bodyReceived(_ connection: OpaquePointer?, count: Int) {
        guard let connection else { return }
        connections.withLock { connections in
            guard case .body(let since, let received, _, let known)? = connections[Int(bitPattern: connection)]?.stage
            else { return }
            connections[Int(bitPattern: connection)]!.stage = .body(
                since: since, received: received + count, lastByte: Self.now(), known: known)
        }
    }
    /// The connection waits for its next request head (keep-alive).
    func requestEnded(_ connection: OpaquePointer?) { set(connection, .head(since: Self.now())) }
    func upgraded(_ connection: OpaquePointer?) { set(connection, .upgraded) }

    func closed(_ connection: OpaquePointer) {
        _ = connections.withLock { $0.removeValue(forKey: Int(bitPattern: connection)) }
    }

    /// Cuts, once a second, connections whose head or body is too slow (`isStale`).
    func watch() {
        Thread.detachNewThread { [self] in
            while watching.current {
                Thread.sleep(forTimeInterval: min(1, limits.headerTimeout / 2, limits.bodyTimeout / 2))
                connections.withLock { connections in
                    let now = Self.now()
                    for entry in connections.values where Self.isStale(entry, now: now, limits: limits) {
                        cut(entry.fd)
                    }
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

    /// Sending its head for longer than the header timeout, or a body too slowly (nothing for
    /// the body timeout, or below the least rate past it). A stage that began after `now` was
    /// read (another thread stamped it first) is not stale: `now - since` would wrap.
    static func isStale(_ entry: Entry, now: UInt64, limits: Limits) -> Bool {
        switch entry.stage {
        case .head(let since):
            return now > since && now - since > UInt64(limits.headerTimeout * 1e9)
        case .body(let since, let received, let lastByte, _):
            let timeout = UInt64(limits.bodyTimeout * 1e9)
            if now > lastByte && now - lastByte > timeout { return true }
            guard now > since && now - since > timeout else { return false }
            return Double(received) < Double(limits.minimumBodyRate) * Double(now - since) / 1e9
        case .busy, .upgraded:
            return false
        }
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
