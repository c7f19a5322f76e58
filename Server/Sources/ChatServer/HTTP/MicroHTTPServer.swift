import CMicroHTTPD
import Foundation
import OfflineChatProtocol
import Synchronization

/// chatd's HTTP/1.1 front end on GNU libmicrohttpd: collects each request (body capped at
/// `bodyLimit(path)` bytes), asks the router, queues the answer, and hands 101 upgrades their socket.
///
/// Handlers run synchronously on the library's thread pool; the C callbacks below find this
/// object through the `cls` pointer.
public final class MicroHTTPServer: Sendable {
    let router: Router
    /// The largest body accepted for a path; a larger one is flagged `bodyTooLarge`.
    let bodyLimit: @Sendable (String) -> Int
    /// The running daemon's address (0 when stopped); a plain integer so it can cross threads.
    private let daemon = Atomic<Int>(0)
    /// Requests begun and not yet completed; stop() waits for zero.
    private let inFlight = NSCondition()
    private nonisolated(unsafe) var inFlightCount = 0  // guarded by `inFlight`
    /// The listening socket `quiesce` took back from the daemon, closed once it has stopped.
    private let quiescedListener = Atomic<Int32>(-1)
    private let draining = Atomic(false)
    /// The daemon serves TLS: an upgraded socket is one end of the library's relay, which it
    /// keeps until the socket closes (see `upgradeHandler`).
    let relaysUpgrades = Atomic(false)
    /// Who holds a connection, and who is cut to make room (see `ConnectionGuard`).
    let connections: ConnectionGuard
    /// Whether a request's `Authorization` and `X-Admin-Key` values are credentials this node
    /// vouched for lately (no database read): its slow body is cut last.
    let isKnownClient: @Sendable (_ authorization: String?, _ adminKey: String?) -> Bool
    /// Requests counted and timed for `GET /metrics`.
    let metrics: Metrics

    init(
        router: Router, metrics: Metrics = Metrics(), maxConnections: Int = 1_000,
        limits: ConnectionGuard.Limits = .init(),
        isKnownClient: @escaping @Sendable (String?, String?) -> Bool = { _, _ in false },
        bodyLimit: @escaping @Sendable (String) -> Int
    ) {
        self.router = router
        self.metrics = metrics
        self.bodyLimit = bodyLimit
        self.isKnownClient = isKnownClient
        connections = ConnectionGuard(maxConnections: maxConnections, limits: limits)
    }

    /// Starts listening on `host`:`port` (0: any free port), with TLS when given a PEM key
    /// and certificate, and returns the bound port. The daemon holds a reference to this
    /// object until `stop()`.
    public func start(
        host: String = "127.0.0.1", port: UInt16, threads: UInt32,
        tls: (key: String, certificate: String, priorities: String)? = nil
    ) throws -> UInt16 {
        let context = Unmanaged.passRetained(self)
        // The library's own limit leaves room above ours: a connection past ours is accepted so
        // that the guard can cut an older, slower one for it. The key and certificate are
        // read while the daemon starts.
        let started = chatd_mhd_start(
            host, port, threads, 120, UInt32(connections.maxConnections + Self.headroom),
            tls?.key, tls?.certificate, tls?.priorities,
            accessHandler, context.toOpaque(), completedHandler, context.toOpaque(),
            connectionNotifier, context.toOpaque())
        guard let started else {
            context.release()
            throw HTTPError(
                500, .internalError,
                "cannot listen on \(host):\(port) (in use, not an address of this machine,"
                    + " or a key, certificate or --tls-priorities that do not load?)")
        }
        daemon.store(Int(bitPattern: started), ordering: .releasing)
        relaysUpgrades.store(tls != nil, ordering: .releasing)
        connections.watch()
        return chatd_mhd_port(started)
    }

    /// Stops accepting connections; requests that arrive on open connections get 503. The
    /// listening socket is shut down at once (new connections are refused) but closed only
    /// after the daemon stops: its worker threads may still hold it in their epoll sets, and
    /// closing it under them is a fatal error in libmicrohttpd ("Failed to remove listen FD").
    public func quiesce() {
        guard let current = OpaquePointer(bitPattern: daemon.load(ordering: .acquiring)) else { return }
        guard !draining.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let listener = MHD_quiesce_daemon(current)
        guard listener >= 0 else { return }
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        quiescedListener.store(listener, ordering: .releasing)
    }

    /// Quiesces, lets requests in flight finish (up to `grace` seconds), then stops the daemon.
    public func stop(grace: TimeInterval = 10) {
        quiesce()
        guard let current = OpaquePointer(bitPattern: daemon.exchange(0, ordering: .acquiringAndReleasing)) else {
            return
        }
        inFlight.lock()
        let deadline = Date(timeIntervalSinceNow: grace)
        while inFlightCount > 0 && inFlight.wait(until: deadline) {}
        inFlight.unlock()
        MHD_stop_daemon(current)
        let listener = quiescedListener.exchange(-1, ordering: .acquiringAndReleasing)
        if listener >= 0 { Glibc.close(listener) }
        connections.stopWatching()
        Unmanaged.passUnretained(self).release()  // the daemon's reference from start()
    }

    var isDraining: Bool { draining.load(ordering: .acquiring) }

    /// Connections the library accepts above `maxConnections`, for the guard to make room.
    static let headroom = 64

    /// File descriptors the process needs: every connection, and SQLite, media and realtime
    /// around them. The soft `RLIMIT_NOFILE` is raised to it where the hard one allows (it
    /// is often 1,024, which capped connections below any configured limit).
    public static func raiseFileLimit(for maxConnections: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let wanted = rlim_t(maxConnections + headroom + 256)
        if limit.rlim_cur < wanted {
            limit.rlim_cur = min(wanted, limit.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(limit.rlim_cur)
    }

    fileprivate func began() {
        inFlight.lock()
        inFlightCount += 1
        inFlight.unlock()
    }

    fileprivate func completed() {
        inFlight.lock()
        inFlightCount -= 1
        inFlight.broadcast()
        inFlight.unlock()
    }
}

/// Per-request state between the library's calls: the body as it arrives.
private final class RequestState {
    var body: [UInt8] = []
    var tooLarge = false
    /// The head announced a body (`ConnectionGuard` times it until it is whole).
    let expectsBody: Bool
    init(expectsBody: Bool) { self.expectsBody = expectsBody }
}

/// A request header's value (the library matches names case-insensitively).
private func header(_ connection: OpaquePointer?, _ name: String) -> String? {
    MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
}

/// Whether the head announces a body: a length above zero, or chunks.
private func announcesBody(_ connection: OpaquePointer?) -> Bool {
    if let length = header(connection, "Content-Length") { return length != "0" }
    return header(connection, "Transfer-Encoding") != nil
}

/// Collects header or query values in the order sent.
private final class ValueCollector {
    var values: [(String, String)] = []
    let lowercaseKeys: Bool
    init(lowercaseKeys: Bool) { self.lowercaseKeys = lowercaseKeys }
}

/// Keeps a route's upgrade closure alive until the library calls back with the socket.
private final class UpgradeBox {
    let handler: @Sendable (UpgradedSocket) -> Void
    /// The library relays the socket (TLS): it must keep the connection until the socket closes.
    let relayed: Bool
    init(_ handler: @escaping @Sendable (UpgradedSocket) -> Void, relayed: Bool) {
        self.handler = handler
        self.relayed = relayed
    }
}

private func collect(_ connection: OpaquePointer?, _ kind: MHD_ValueKind, lowercaseKeys: Bool) -> [(String, String)] {
    let collector = ValueCollector(lowercaseKeys: lowercaseKeys)
    let iterator: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let collector = Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue()
        let name = String(cString: key)
        collector.values.append(
            (collector.lowercaseKeys ? name.lowercased() : name, value.map { String(cString: $0) } ?? ""))
        return .YES
    }
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values(connection, kind, iterator, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.values
}

private let accessHandler: MHD_AccessHandlerCallback = {
    cls, connection, url, method, _, uploadData, uploadSize, requestContext in
    guard let cls, let requestContext, let uploadSize else { return .NO }
    let server = Unmanaged<MicroHTTPServer>.fromOpaque(cls).takeUnretainedValue()
    guard let stored = requestContext.pointee else {
        let expectsBody = announcesBody(connection)
        requestContext.pointee = Unmanaged.passRetained(RequestState(expectsBody: expectsBody)).toOpaque()
        if expectsBody {
            let known = server.isKnownClient(
                header(connection, "Authorization"), header(connection, Endpoints.adminKeyHeader))
            server.connections.bodyBegan(connection, known: known)
        } else {
            server.connections.requestBegan(connection)
        }
        server.began()
        return .YES
    }
    let state = Unmanaged<RequestState>.fromOpaque(stored).takeUnretainedValue()
    if uploadSize.pointee > 0 {
        let count = uploadSize.pointee
        server.connections.bodyReceived(connection, count: count)
        if state.body.count + count > server.bodyLimit(url.map { String(cString: $0) } ?? "/") {
            state.tooLarge = true
        } else if let uploadData {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: count) {
                state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
            }
        }
        uploadSize.pointee = 0
        return .YES
    }
    if state.expectsBody { server.connections.requestBegan(connection) }  // whole: now busy
    guard let path = HTTPRequest.KeptEscapes.path(url.map { String(cString: $0) } ?? "/"),
        let query = HTTPRequest.KeptEscapes.query(collect(connection, .GET_ARGUMENT_KIND, lowercaseKeys: false))
    else {
        return queue(
            .error(.badParameter("the path or query encodes a NUL (%00), or the path an encoded /")), on: connection,
            of: server)
    }
    var request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "GET", path: path, query: query,
        headers: Dictionary(collect(connection, .HEADER_KIND, lowercaseKeys: true)) { _, last in last },
        body: state.body)
    request.bodyTooLarge = state.tooLarge
    guard !server.isDraining else {
        return queue(.error(HTTPError(503, .unavailable, "chatd is shutting down")), on: connection, of: server)
    }
    let started = DispatchTime.now().uptimeNanoseconds
    let (response, route) = server.router.routed(request)
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    server.metrics.request(method: request.method, route: route, status: response.status, seconds: seconds)
    return queue(response, on: connection, of: server)
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer?, of server: MicroHTTPServer) -> MHD_Result {
    let handle: OpaquePointer?
    var box: Unmanaged<UpgradeBox>?
    if let upgrade = response.upgrade {
        server.connections.upgraded(connection)
        // released by upgradeHandler
        box = Unmanaged.passRetained(UpgradeBox(upgrade, relayed: server.relaysUpgrades.load(ordering: .acquiring)))
        handle = MHD_create_response_for_upgrade(upgradeHandler, box!.toOpaque())
    } else if let file = response.file {
        let owner = Unmanaged.passRetained(file)  // released by releaseFile
        handle = MHD_create_response_from_callback(UInt64(file.size), 64 << 10, readFile, owner.toOpaque(), releaseFile)
        if handle == nil { owner.release() }
    } else if response.body.isEmpty {
        handle = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
    } else {
        // libmicrohttpd sends the body from the answer's own storage, kept alive until it
        // lets go of it (`releaseBody`), instead of a copy: a changelog page is 400 KB.
        let owner = Unmanaged.passRetained(ResponseBody(response.body))
        handle = owner.takeUnretainedValue().bytes.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer_with_free_callback_cls(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), releaseBody, owner.toOpaque())
        }
        if handle == nil { owner.release() }
    }
    guard let handle else {
        box?.release()
        return .NO
    }
    for (name, value) in response.headers { MHD_add_response_header(handle, name, value) }
    let result = MHD_queue_response(connection, UInt32(response.status), handle)
    MHD_destroy_response(handle)
    if result == .NO { box?.release() }
    return result
}

/// An answer's body while libmicrohttpd sends it. The pointer handed over comes out of
/// `withUnsafeBytes`, which Swift promises only within the call; it holds after because a
/// non-empty `[UInt8]` here is native storage on the heap, which an array that is never mutated
/// keeps where it is, and this owns the array until libmicrohttpd lets go (`releaseBody`).
private final class ResponseBody {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

private let releaseBody: MHD_ContentReaderFreeCallback = { owner in
    guard let owner else { return }
    Unmanaged<ResponseBody>.fromOpaque(owner).release()
}

/// The next bytes of a file answer at `position` (libmicrohttpd asks as the socket takes them).
private let readFile: MHD_ContentReaderCallback = { owner, position, buffer, size in
    guard let owner, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let file = Unmanaged<ResponseFile>.fromOpaque(owner).takeUnretainedValue()
    let read = pread(file.fd, buffer, size, off_t(position))
    return read > 0 ? read : read == 0 ? -1 : -2  // MHD_CONTENT_READER_END_OF_STREAM, …_WITH_ERROR
}

private let releaseFile: MHD_ContentReaderFreeCallback = { owner in
    guard let owner else { return }
    Unmanaged<ResponseFile>.fromOpaque(owner).release()
}

private let upgradeHandler: MHD_UpgradeHandler = { cls, _, _, extraIn, extraInSize, socket, urh in
    guard let cls else { return }
    let box = Unmanaged<UpgradeBox>.fromOpaque(cls).takeRetainedValue()
    let initial =
        extraInSize > 0 && extraIn != nil
        ? [UInt8](UnsafeRawBufferPointer(start: extraIn, count: extraInSize)) : []
    nonisolated(unsafe) let handle = urh
    // A plain socket is taken over whole: a copy of its descriptor is kept, and the library
    // lets go of the connection at once (its 32 KiB memory pool was three quarters of what a
    // realtime socket cost chatd). Its close then closes only its own descriptor; the copy
    // keeps the connection open. Under TLS the library relays the bytes and keeps it.
    if !box.relayed {
        let own = dup(socket)
        if own >= 0 {
            _ = chatd_mhd_upgrade_close(handle)
            return box.handler(UpgradedSocket(fd: own, initialBytes: initial, close: { _ = Glibc.close(own) }))
        }
    }
    box.handler(UpgradedSocket(fd: socket, initialBytes: initial, close: { _ = chatd_mhd_upgrade_close(handle) }))
}

private let completedHandler: MHD_RequestCompletedCallback = { cls, connection, requestContext, _ in
    guard let cls, let requestContext, let stored = requestContext.pointee else { return }
    Unmanaged<RequestState>.fromOpaque(stored).release()
    requestContext.pointee = nil
    let server = Unmanaged<MicroHTTPServer>.fromOpaque(cls).takeUnretainedValue()
    server.connections.requestEnded(connection)
    server.completed()
}
