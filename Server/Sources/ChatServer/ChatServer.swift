import Foundation
import OfflineChatProtocol
import Synchronization

/// A running chatd: store, realtime hub and HTTP front end.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.port = 0
/// let server = try ChatServer(configuration: configuration)
/// let port = try server.start()
/// server.stop()   // graceful: stops accepting, finishes requests, closes the database
/// ```
public final class ChatServer: Sendable {
    public let configuration: ServerConfiguration
    public let store: Store
    public let adminKey: String
    /// True when this start generated the admin key (print it once).
    public let adminKeyGenerated: Bool
    let hub: RealtimeHub
    let bus: NatsBus?
    let http: MicroHTTPServer
    /// The operator's listener (`--admin-listen`), nil when `http` serves everything.
    let adminHTTP: MicroHTTPServer?
    /// The port `adminHTTP` is bound to, once started.
    public let adminPort = Atomic<UInt16>(0)
    /// Whether the console's files were found (`/admin` answers 404 without them).
    public let hasConsole: Bool

    public init(configuration: ServerConfiguration) throws {
        self.configuration = configuration
        let clock: any ServerClock = configuration.testClock ? AdjustableClock() : SystemClock()
        store = try Store.open(configuration, clock: clock)
        (adminKey, adminKeyGenerated) = try AdminKey.load(
            configured: configuration.adminKey, in: configuration.dataDirectory)
        bus = try configuration.bus.map { try NatsBus(settings: $0, seal: BusSeal(secret: $0.resolvedSecret())) }
        if bus != nil { try store.resetPresence(node: configuration.realtime.nodeID) }
        let metrics = Metrics()
        var realtime = configuration.realtime
        realtime.maxSockets = configuration.maxConnections
        hub = try RealtimeHub(store: store, configuration: realtime, bus: bus, metrics: metrics)
        let media = try MediaStore(directory: configuration.mediaLocation)
        let sweep = MediaSweep(graceSeconds: configuration.mediaGrace)
        sweep.runIfDue(store: store, media: media)
        var routes = Routes(
            store: store, adminKey: adminKey, clock: clock as? AdjustableClock, realtime: hub, metrics: metrics,
            media: media,
            mediaSweep: sweep,
            limits: RateLimiter(
                rules: [
                    .write: .init(perMinute: configuration.writesPerMinute),
                    .join: .init(perMinute: configuration.joinsPerMinute),
                    .upload: .init(perMinute: configuration.uploadsPerMinute),
                    .passwordHash: .init(perMinute: configuration.passwordHashesPerMinute)
                ], clock: clock),
            mediaQuota: configuration.mediaQuota,
            allowHTTPSMedia: configuration.allowHTTPSMedia, allowQueryToken: configuration.allowQueryToken)
        routes.console = (configuration.consoleDirectory ?? ConsoleFiles.installed()).flatMap(ConsoleFiles.load)
        hasConsole = routes.console != nil
        let (maxBody, maxMedia) = (configuration.maxBodySize, configuration.maxMediaSize)
        let (store, adminKey) = (store, adminKey)
        let isKnownClient: @Sendable (String?, String?) -> Bool = { authorization, key in
            key.map { constantTimeEqual($0, adminKey) } ?? store.isKnownSession(authorization: authorization)
        }
        let bodyLimit: @Sendable (String) -> Int = { path in path == Endpoints.media ? maxMedia : maxBody }
        var router = routes.router()
        // With an operator's address of its own, the public one serves none of its paths, and
        // the operator's connections are not among the public ones a flood takes.
        adminHTTP = configuration.adminListen.map { _ in
            MicroHTTPServer(
                router: router, metrics: metrics, maxConnections: Self.adminConnections,
                limits: configuration.connectionLimits, isKnownClient: isKnownClient, bodyLimit: bodyLimit)
        }
        router.servesOperator = configuration.adminListen == nil
        http = MicroHTTPServer(
            router: router, metrics: metrics, maxConnections: configuration.maxConnections,
            limits: configuration.connectionLimits, isKnownClient: isKnownClient, bodyLimit: bodyLimit)
    }

    /// Connections the operator's listener holds at most.
    static let adminConnections = 64

    /// Starts serving on the configured address (TLS when configured) and returns the bound port.
    public func start() throws -> UInt16 {
        var tls: (key: String, certificate: String, priorities: String)?
        if let keyFile = configuration.tlsKey, let certificateFile = configuration.tlsCertificate {
            do {
                tls = (
                    try String(contentsOf: keyFile, encoding: .utf8),
                    try String(contentsOf: certificateFile, encoding: .utf8),
                    configuration.tlsPriorities
                )
            } catch {
                throw HTTPError(
                    500, .internalError, "cannot read the TLS key or certificate: \(error.localizedDescription)")
            }
        }
        // HTTP connections and as many realtime sockets, each up to the limit.
        _ = MicroHTTPServer.raiseFileLimit(for: 2 * configuration.maxConnections)
        hub.start()
        if let adminHTTP, let address = configuration.adminListen {
            adminPort.store(
                try adminHTTP.start(host: address.host, port: address.port, threads: 2, tls: tls), ordering: .releasing)
        }
        do {
            return try http.start(
                host: configuration.host, port: configuration.port, threads: configuration.workerThreads, tls: tls)
        } catch {
            adminHTTP?.stop(grace: 0)
            throw error
        }
    }

    /// The console's address: on the operator's listener when there is one.
    public func consoleURL(port: UInt16) -> String {
        guard let address = configuration.adminListen else { return baseURL(port: port) + "/admin/" }
        let host = address.host.contains(":") ? "[\(address.host)]" : address.host
        return
            "\(configuration.tlsKey == nil ? "http" : "https")://\(host):\(adminPort.load(ordering: .acquiring))/admin/"
    }

    /// The base URL clients use, e.g. `https://[::1]:8443`.
    public func baseURL(port: UInt16) -> String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(configuration.tlsKey == nil ? "http" : "https")://\(host):\(port)"
    }

    /// Stops accepting, closes realtime sockets (1001), lets in-flight requests finish (for
    /// `shutdownGrace` seconds at most: a client that stalls mid-request is cut), then closes
    /// the database.
    public func stop() throws {
        http.quiesce()
        adminHTTP?.quiesce()
        hub.stop()
        http.stop(grace: configuration.shutdownGrace)
        adminHTTP?.stop(grace: configuration.shutdownGrace)
        bus?.close()
        try store.close()
    }
}

/// The admin API key: from the flag or environment, else `admin.key` (0600) in the data dir,
/// generated on first start.
enum AdminKey {
    /// The least length of a configured key, in bytes (a generated one has 51).
    static let minimumLength = 32

    static func load(configured: String?, in directory: URL) throws -> (key: String, generated: Bool) {
        if let configured, !configured.isEmpty {
            guard configured.utf8.count >= minimumLength else {
                throw StoreError.unavailable(
                    "the admin key must be at least \(minimumLength) bytes (openssl rand -hex 32), or left unset to "
                        + "have one generated in the data directory")
            }
            return (configured, false)
        }
        let file = directory.appendingPathComponent("admin.key")
        if let stored = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
            !stored.isEmpty
        {
            return (stored, false)
        }
        let key = "ak_" + Store.randomHex(bytes: 24)
        guard
            FileManager.default.createFile(
                atPath: file.path, contents: Data((key + "\n").utf8),
                attributes: [.posixPermissions: 0o600])
        else {
            throw HTTPError(500, .internalError, "cannot write \(file.path)")
        }
        return (key, true)
    }
}
