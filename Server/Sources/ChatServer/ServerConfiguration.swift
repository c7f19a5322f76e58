import Foundation

/// Everything `chatd` is started with.
public struct ServerConfiguration: Sendable {
    /// Where the database (unless `database` names PostgreSQL), media and the admin key live.
    public var dataDirectory = URL(fileURLWithPath: "chatd-data")
    /// Where uploaded files live; nil: `media` in `dataDirectory`. Nodes sharing a PostgreSQL
    /// database share this directory too (a network file system; docs/DEPLOY.md says why).
    public var mediaDirectory: URL?
    /// `postgres://…`: keep every table in PostgreSQL (several nodes can share it); nil:
    /// embedded SQLite in `dataDirectory`.
    public var database: String?
    /// PostgreSQL connections this node keeps open at most.
    public var databaseConnections = 8
    /// The realtime bus (nats-server) to the other nodes sharing `database`; nil: one node.
    public var bus: BusSettings?
    /// The address to bind: an IPv4 or IPv6 address (default loopback only; `0.0.0.0` or `::`
    /// for every interface, behind TLS or a reverse proxy, see docs/DEPLOY.md).
    public var host = "127.0.0.1"
    /// 0 picks a free port (printed on start).
    public var port: UInt16 = 8080
    /// A second address for the operator (`--admin-listen`): the console (`/admin`), the admin
    /// API (`/v1/admin`) and `/metrics` are served there only, with connections of their own,
    /// and the public address answers them 404. nil: everything on `host`:`port`.
    public var adminListen: (host: String, port: UInt16)?
    /// Where the console's files are; nil: the copy installed beside chatd (`ConsoleFiles`).
    public var consoleDirectory: URL?
    /// PEM files of the certificate (chain) and its private key: chatd speaks HTTPS and WSS.
    public var tlsCertificate: URL?
    public var tlsKey: URL?
    /// The GnuTLS priority string of chatd's TLS: by default TLS 1.2 and 1.3 only, forward
    /// secret key exchange (ECDHE), AEAD suites (no CBC, no SHA-1 MACs, no static RSA).
    public var tlsPriorities = ServerConfiguration.defaultTLSPriorities
    public static let defaultTLSPriorities =
        "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-RSA:+ECDHE-ECDSA"
        + ":-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD"
    /// Accept the realtime token as `?token=` in the URL (where proxies log it). Off: only the
    /// `Authorization` header, which every SDK sends.
    public var allowQueryToken = false
    /// The admin API key; nil: read `admin.key` in the data dir, or generate and print it once.
    public var adminKey: String?
    /// Request bodies above this many bytes get 413.
    public var maxBodySize = 1 << 20
    /// Media uploads (`POST /v1/media`) above this many bytes get 413.
    public var maxMediaSize = 16 << 20
    /// Attachments may also name `https://` urls elsewhere (else only chatd's own media).
    public var allowHTTPSMedia = false
    /// Seconds an upload waits for a message naming it before it (and its file, if no other
    /// upload shares it) is removed; a deleted message's uploads go the same way.
    public var mediaGrace: Int64 = 24 * 3600
    /// Bytes of uploads one user may hold (each upload counts until swept); 0: no quota.
    public var mediaQuota: Int64 = 1 << 30
    /// Per-user rate limits, requests a minute (bursts of half a minute's worth); 0: none.
    /// Writes are authenticated POST/PUT/PATCH/DELETE other than joins and uploads.
    public var writesPerMinute = 1_200
    public var joinsPerMinute = 30
    public var uploadsPerMinute = 60
    /// Group passwords one user may have hashed or checked a minute (scrypt, 16 MiB and tens
    /// of milliseconds each), bursts of half that.
    public var passwordHashesPerMinute = 12
    /// Open HTTP connections at most (past it the oldest still sending its request head is cut
    /// to make room), and as many realtime sockets (past it a new one is closed with 1013).
    public var maxConnections = 1_000
    /// Seconds a client may take to send a request head (slow ones are cut).
    public var headerTimeout: TimeInterval = 10
    /// Seconds a request body may go without a byte, and after which it must average
    /// `minimumBodyRate` bytes a second (trickled bodies are cut).
    public var bodyTimeout: TimeInterval = 10
    public var minimumBodyRate = 1024
    /// Seconds a shutdown (SIGTERM) gives requests in flight before it closes them.
    public var shutdownGrace: TimeInterval = 10
    /// HTTP worker threads; nil: 16. A thread waits with its request on the database: on
    /// PostgreSQL for its round trips (16 gave 10-25% more sends through a three-node cluster
    /// than 4), on SQLite for its send's group commit, which then carries more sends at once
    /// (16 gave 10-25% more sends than 4 on one node; `docs/PERFORMANCE.md`).
    public var threads: UInt32?

    /// `threads`, or the default.
    var workerThreads: UInt32 { threads ?? 16 }
    /// Changes kept for replay (0: all).
    public var changelogRetention: Int64 = 0
    /// Expose `POST /v1/admin/clock` to move chatd's clock forward (tests only).
    public var testClock = false
    /// Shut down (as on SIGTERM) when standard input reaches end of file.
    public var stopOnStdinEOF = false
    public var realtime = RealtimeHub.Configuration()

    public init() {}

    /// The connection guard's limits on slow heads and bodies.
    var connectionLimits: ConnectionGuard.Limits {
        .init(headerTimeout: headerTimeout, bodyTimeout: bodyTimeout, minimumBodyRate: minimumBodyRate)
    }

    /// `mediaDirectory`, or `media` in the data directory.
    public var mediaLocation: URL { mediaDirectory ?? dataDirectory.appendingPathComponent("media") }
}

extension ServerConfiguration {
    /// `gethostname(2)`: no name lookup (Foundation's `hostName` resolves it, which can stall
    /// for seconds on a machine without DNS).
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "chatd" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
