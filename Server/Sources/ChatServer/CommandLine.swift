import Foundation
import OfflineChatProtocol

/// What `chatd` was asked to do.
public enum ChatdCommand: Equatable, Sendable {
    case serve
    /// `chatd user add UID [--name N]`: works on the data dir without a running server.
    case addUser(uid: String, name: String?)
    /// `chatd token UID [--ttl SECONDS]`: prints a new auth token.
    case token(uid: String, ttlSeconds: Int64?)
    /// `chatd group add GUID --owner UID [--name N] [--type public|private]`.
    case addGroup(guid: String, name: String?, owner: String, type: GroupType)
    /// `chatd group member add GUID UID [--scope participant|moderator|admin]`, as the owner.
    case addGroupMember(guid: String, uid: String, scope: GroupScope)
    /// `chatd group member import GUID FILE [--scope …]`: a uid a line (`-`: standard input),
    /// added 1,000 at a time as the owner (`GroupMemberImport`).
    case importGroupMembers(guid: String, path: String, scope: GroupScope)
    /// `chatd migrate`: brings the store's schema up to date and exits.
    case migrate
    /// `chatd export [--output FILE]`: the whole deployment as JSON lines (stdout by default).
    case export(output: String?)
    /// `chatd import FILE [--keep-epoch]`: loads an export into a new, empty store.
    case importFile(path: String, keepEpoch: Bool)
    /// `chatd new-epoch`: after restoring a backup (chatd stopped), so clients whose cursors
    /// may be past what the backup holds rebuild instead of resuming.
    case newEpoch
    case help
    case version
}

/// A usage error: the message says what to fix.
public struct UsageError: Error, CustomStringConvertible {
    public let description: String
}

public enum ChatdArguments {
    public static let usage = """
        usage: chatd [--data DIR | --database URL] [--port PORT] [--admin-key KEY] [options]
               chatd user add UID [--name NAME] [--data DIR | --database URL]
               chatd token UID [--ttl SECONDS] [--data DIR | --database URL]
               chatd group add GUID --owner UID [--name NAME] [--type public|private] [--data DIR | --database URL]
               chatd group member add GUID UID [--scope participant|moderator|admin] [--data DIR | --database URL]
               chatd group member import GUID FILE|- [--scope …] [--data DIR | --database URL]
                     (a uid a line, or "uid,scope"; added 1,000 at a time)
               chatd migrate [--data DIR | --database URL]
               chatd export [--output FILE] [--data DIR | --database URL]
               chatd import FILE [--keep-epoch] [--data DIR | --database URL]
               chatd new-epoch [--data DIR | --database URL]   (after restoring a backup, chatd stopped)

        Serves the OfflineChat API (HTTP/JSON under /v1, WebSocket at /v1/realtime), on 127.0.0.1 unless told.
          --data DIR                 data directory (default ./chatd-data)
          --database URL             postgres://user@host:port/db: PostgreSQL instead of SQLite in DIR
                                     (or CHATD_DATABASE; several chatd nodes may share one)
          --media DIR                uploaded files (default DIR/media; nodes of a cluster share one directory)
          --db-connections N         PostgreSQL connections per node (default 8)
          --nats URL                 nats://host:port or tls://host:port: realtime across the nodes sharing --database
          --bus-key-file FILE        with --nats: the secret every node shares, which seals the bus's frames
                                     (or CHATD_BUS_KEY; at least 32 bytes: openssl rand -hex 32)
          --nats-user USER           NATS user; its password in CHATD_NATS_PASSWORD or --nats-password-file FILE
          --nats-token-file FILE     a NATS token (or CHATD_NATS_TOKEN)
          --nats-creds FILE          a NATS .creds file (user JWT and NKey seed, as nsc writes it)
          --nats-ca FILE             PEM CA certificates of nats-server's certificate (TLS to NATS)
          --nats-cert FILE           a client certificate for NATS (with --nats-key FILE)
          --node-id NAME             this node's name in logs and health (default the host name)
          --catch-up SECONDS         with --nats: how often sockets are checked against their user's head (default 5)
          --token-check SECONDS      how often realtime sockets' tokens are checked against the database (default 5)
          --port PORT                TCP port, 0 for any free one (default 8080)
          --listen HOST:PORT         address and port to bind (default 127.0.0.1:8080; [::1]:8080 for IPv6)
          --admin-listen HOST:PORT   serve the console (/admin), /v1/admin and /metrics only here, not on --listen
          --console-dir DIR          the console's files (default: those installed beside chatd)
          --tls-cert FILE            PEM certificate (chain): serve HTTPS and WSS (with --tls-key)
          --tls-key FILE             PEM private key of --tls-cert
          --tls-priorities STRING    GnuTLS priorities (default: TLS 1.2 and 1.3, ECDHE, AEAD suites only)
          --allow-query-token        accept the realtime token as ?token= (logged by proxies; default: header only)
          --admin-key KEY            admin API key (visible in ps: prefer CHATD_ADMIN_KEY or DIR/admin.key; else generated once)
          --threads N                HTTP worker threads (default 16)
          --max-body BYTES           largest request body (default 1048576)
          --max-media BYTES          largest media upload (default 16777216)
          --allow-https-media        attachments may name https:// urls (default: only chatd's own media)
          --media-grace SECONDS      how long an upload no message names is kept (default 86400)
          --media-quota BYTES        bytes of uploads one user may hold, 0 = no quota (default 1073741824)
          --write-rate N             writes per minute per user, bursts of N/2; 0 = no limit (default 1200)
          --join-rate N              group joins per minute per user (default 30)
          --upload-rate N            media uploads per minute per user (default 60)
          --max-connections N        open HTTP connections at most, the slowest cut to make room, and as many
                                     realtime sockets (default 1000)
          --header-timeout SECONDS   time to send a request head (default 10)
          --body-timeout SECONDS     time a request body may go without a byte, after which it must keep
                                     --min-body-rate (default 10)
          --min-body-rate BYTES      bytes a second a body must average past --body-timeout (default 1024)
          --shutdown-grace SECONDS   on SIGTERM, how long requests in flight may take (default 10)
          --changelog-retention N    changes kept for replay in each log, 0 = all (default 0)
          --heartbeat SECONDS        realtime ping interval (default 20)
          --realtime-buffer BYTES    unsent bytes before a slow socket is dropped (default 1048576)
          --max-sockets-per-user N   realtime sockets one user may hold at once (default 8)
          --cursor-interval SECONDS  least time between two `cursor` frames to a socket that asked for them
                                     (default 1)
          --test-clock               allow POST /v1/admin/clock (tests only)
          --stop-on-stdin-eof        shut down when standard input closes (a test harness that dies
                                     closes it, so no chatd outlives its tests)
        """

    /// Parses `arguments` (without the program name) into a command and a configuration.
    public static func parse(
        _ arguments: [String], environment: [String: String] = [:]
    ) throws -> (ChatdCommand, ServerConfiguration) {
        var configuration = ServerConfiguration()
        configuration.adminKey = environment["CHATD_ADMIN_KEY"]
        configuration.database = try environment["CHATD_DATABASE"].flatMap { $0.isEmpty ? nil : try databaseURL($0) }
        var positional: [String] = []
        var name: String?
        var ttl: Int64?
        var owner: String?
        var groupType = GroupType.public
        var scope = GroupScope.participant
        var output: String?
        var keepEpoch = false
        var bus = BusSettings(url: "")
        bus.secret = environment["CHATD_BUS_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        bus.password = environment["CHATD_NATS_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        bus.token = environment["CHATD_NATS_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        var busFlags: [String] = []
        var index = 0
        func value(_ flag: String) throws -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(description: "\(flag) needs a value") }
            return arguments[index]
        }
        func number<T: FixedWidthInteger>(_ flag: String, _ range: ClosedRange<T>) throws -> T {
            let raw = try value(flag)
            guard let parsed = T(raw), range.contains(parsed) else {
                throw UsageError(
                    description: "\(flag) must be a number in \(range.lowerBound)...\(range.upperBound), not \(raw)")
            }
            return parsed
        }
        func seconds(_ flag: String, _ range: ClosedRange<Double>) throws -> Double {
            let raw = try value(flag)
            guard let parsed = Double(raw), range.contains(parsed) else {
                throw UsageError(
                    description:
                        "\(flag) must be seconds between \(range.lowerBound) and \(range.upperBound), not \(raw)")
            }
            return parsed
        }
        func address(_ flag: String) throws -> (host: String, port: UInt16) {
            let raw = try value(flag)
            guard let colon = raw.lastIndex(of: ":"), let port = UInt16(raw[raw.index(after: colon)...]) else {
                throw UsageError(description: "\(flag) wants HOST:PORT (127.0.0.1:8080, [::1]:8080), not \(raw)")
            }
            var host = String(raw[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            return (host == "localhost" ? "127.0.0.1" : host, port)
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--help", "-h": return (.help, configuration)
            case "--version": return (.version, configuration)
            case "--data": configuration.dataDirectory = URL(fileURLWithPath: try value(argument))
            case "--media": configuration.mediaDirectory = URL(fileURLWithPath: try value(argument))
            case "--database": configuration.database = try databaseURL(try value(argument))
            case "--db-connections": configuration.databaseConnections = try number(argument, 1...1000)
            case "--nats":
                let url = try value(argument)
                bus.url = url
                guard url.split(separator: ",").allSatisfy({ $0.hasPrefix("nats://") || $0.hasPrefix("tls://") }) else {
                    throw UsageError(
                        description: "--nats wants nats://host:port or tls://host:port, not \(bus.redactedURL)")
                }
            case "--bus-key-file": bus.secretFile = try value(argument)
            case "--nats-user": bus.user = try value(argument)
            case "--nats-password-file": bus.passwordFile = try value(argument)
            case "--nats-token-file": bus.tokenFile = try value(argument)
            case "--nats-creds": bus.credentialsFile = try value(argument)
            case "--nats-ca": bus.caFile = try value(argument)
            case "--nats-cert": bus.certificateFile = try value(argument)
            case "--nats-key": bus.keyFile = try value(argument)
            case "--node-id": configuration.realtime.nodeID = try value(argument)
            case "--catch-up": configuration.realtime.catchUpSeconds = try seconds(argument, 0.05...3600)
            case "--token-check": configuration.realtime.tokenCheckSeconds = try seconds(argument, 0.05...3600)
            case "--port": configuration.port = try number(argument, 0...65535)
            case "--listen": (configuration.host, configuration.port) = try address(argument)
            case "--admin-listen": configuration.adminListen = try address(argument)
            case "--console-dir": configuration.consoleDirectory = URL(fileURLWithPath: try value(argument))
            case "--tls-cert": configuration.tlsCertificate = URL(fileURLWithPath: try value(argument))
            case "--tls-key": configuration.tlsKey = URL(fileURLWithPath: try value(argument))
            case "--tls-priorities": configuration.tlsPriorities = try value(argument)
            case "--allow-query-token": configuration.allowQueryToken = true
            case "--admin-key": configuration.adminKey = try value(argument)
            case "--threads": configuration.threads = try number(argument, 1...256)
            case "--max-body": configuration.maxBodySize = try number(argument, 1024...(64 << 20))
            case "--max-media": configuration.maxMediaSize = try number(argument, 1024...(1 << 30))
            case "--allow-https-media": configuration.allowHTTPSMedia = true
            case "--media-grace": configuration.mediaGrace = try number(argument, 0...(365 * 24 * 3600))
            case "--media-quota": configuration.mediaQuota = try number(argument, 0...Int64.max)
            case "--write-rate": configuration.writesPerMinute = try number(argument, 0...1_000_000_000)
            case "--join-rate": configuration.joinsPerMinute = try number(argument, 0...1_000_000_000)
            case "--upload-rate": configuration.uploadsPerMinute = try number(argument, 0...1_000_000_000)
            case "--max-connections": configuration.maxConnections = try number(argument, 8...1_000_000)
            case "--header-timeout": configuration.headerTimeout = try seconds(argument, 0.2...600)
            case "--body-timeout": configuration.bodyTimeout = try seconds(argument, 0.2...3600)
            case "--min-body-rate": configuration.minimumBodyRate = try number(argument, 1...(1 << 30))
            case "--shutdown-grace": configuration.shutdownGrace = try seconds(argument, 0...600)
            case "--changelog-retention": configuration.changelogRetention = try number(argument, 0...Int64.max)
            case "--realtime-buffer": configuration.realtime.maxBufferedBytes = try number(argument, 1024...(1 << 30))
            case "--max-sockets-per-user": configuration.realtime.maxSocketsPerUser = try number(argument, 1...10_000)
            case "--cursor-interval": configuration.realtime.cursorSeconds = try seconds(argument, 0...3600)
            case "--heartbeat": configuration.realtime.heartbeatSeconds = try seconds(argument, 0.05...3600)
            case "--test-clock": configuration.testClock = true
            case "--stop-on-stdin-eof": configuration.stopOnStdinEOF = true
            case "--name": name = try value(argument)
            case "--ttl": ttl = try number(argument, 1...315_360_000)
            case "--owner": owner = try value(argument)
            case "--type":
                let raw = try value(argument)
                guard let parsed = GroupType(rawValue: raw), parsed != .password else {
                    throw UsageError(description: "--type must be public or private, not \(raw)")
                }
                groupType = parsed
            case "--output": output = try value(argument)
            case "--keep-epoch": keepEpoch = true
            case "--scope":
                let raw = try value(argument)
                guard let parsed = GroupScope(rawValue: raw), parsed != .owner else {
                    throw UsageError(description: "--scope must be participant, moderator or admin, not \(raw)")
                }
                scope = parsed
            default:
                guard !argument.hasPrefix("-") else { throw UsageError(description: "unknown option \(argument)") }
                positional.append(argument)
            }
            if argument.hasPrefix("--nats-") || argument == "--bus-key-file" { busFlags.append(argument) }
            index += 1
        }
        configuration.bus = try checked(bus, flags: busFlags)
        switch positional.first {
        case nil, "serve"?:
            guard positional.count <= 1 else { throw UsageError(description: "unexpected \(positional[1])") }
            guard (configuration.tlsCertificate == nil) == (configuration.tlsKey == nil) else {
                throw UsageError(description: "--tls-cert and --tls-key go together")
            }
            return (.serve, configuration)
        case "user"?:
            guard positional.count == 3, positional[1] == "add" else {
                throw UsageError(description: "usage: chatd user add UID [--name NAME]")
            }
            return (.addUser(uid: positional[2], name: name), configuration)
        case "migrate"?:
            guard positional.count == 1 else { throw UsageError(description: "usage: chatd migrate") }
            return (.migrate, configuration)
        case "export"?:
            guard positional.count == 1 else { throw UsageError(description: "usage: chatd export [--output FILE]") }
            return (.export(output: output), configuration)
        case "new-epoch"?:
            guard positional.count == 1 else { throw UsageError(description: "usage: chatd new-epoch") }
            return (.newEpoch, configuration)
        case "import"?:
            guard positional.count == 2 else {
                throw UsageError(description: "usage: chatd import FILE [--keep-epoch]")
            }
            return (.importFile(path: positional[1], keepEpoch: keepEpoch), configuration)
        case "token"?:
            guard positional.count == 2 else { throw UsageError(description: "usage: chatd token UID [--ttl SECONDS]") }
            return (.token(uid: positional[1], ttlSeconds: ttl), configuration)
        case "group"?:
            if positional.count == 3, positional[1] == "add" {
                guard let owner else { throw UsageError(description: "chatd group add needs --owner UID") }
                return (.addGroup(guid: positional[2], name: name, owner: owner, type: groupType), configuration)
            }
            guard positional.count == 5, positional[1] == "member", ["add", "import"].contains(positional[2]) else {
                throw UsageError(
                    description:
                        "usage: chatd group add GUID --owner UID | chatd group member add GUID UID"
                        + " | chatd group member import GUID FILE")
            }
            if positional[2] == "import" {
                return (.importGroupMembers(guid: positional[3], path: positional[4], scope: scope), configuration)
            }
            return (.addGroupMember(guid: positional[3], uid: positional[4], scope: scope), configuration)
        case let other?:
            throw UsageError(description: "unknown command \(other)")
        }
    }

    /// What to warn about on start: secrets given where every local account sees them (`ps`,
    /// `/proc/PID/cmdline`). Never repeats a secret.
    public static func warnings(_ arguments: [String], _ configuration: ServerConfiguration) -> [String] {
        var warnings: [String] = []
        if arguments.contains("--admin-key") {
            warnings.append(
                "--admin-key is visible to every local account (ps); prefer CHATD_ADMIN_KEY or "
                    + "\(configuration.dataDirectory.path)/admin.key (0600)")
        }
        if let bus = configuration.bus, bus.urlHoldsCredentials, arguments.contains(bus.url) {
            warnings.append(
                "--nats \(bus.redactedURL) holds credentials visible to every local account (ps); prefer "
                    + "--nats-user with CHATD_NATS_PASSWORD or --nats-password-file, or CHATD_NATS_TOKEN")
        }
        if let database = configuration.database, arguments.contains(database), databaseHoldsPassword(database) {
            warnings.append(
                "--database holds a password visible to every local account (ps); prefer CHATD_DATABASE, "
                    + "or libpq's ~/.pgpass or PGPASSFILE (see docs/DEPLOY.md)")
        }
        func isLoopback(_ host: String) -> Bool { ["127.0.0.1", "::1"].contains(host) || host.hasPrefix("127.") }
        if !isLoopback(configuration.host) && configuration.tlsCertificate == nil {
            warnings.append(
                "--listen \(configuration.host) without --tls-cert: tokens cross the network in the clear unless a "
                    + "TLS proxy is the only way in (docs/DEPLOY.md)")
        }
        if let admin = configuration.adminListen, !isLoopback(admin.host), configuration.tlsCertificate == nil {
            warnings.append(
                "--admin-listen \(admin.host) without --tls-cert: the admin key crosses the network in the clear;"
                    + " keep it on loopback (an SSH tunnel) or a private network (docs/DEPLOY.md)")
        }
        return warnings
    }

    /// `postgres://user:password@…`, or a `password=` parameter.
    static func databaseHoldsPassword(_ url: String) -> Bool {
        guard let scheme = url.range(of: "://") else { return false }
        let rest = url[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        return (authority.contains("@") && authority.prefix { $0 != "@" }.contains(":"))
            || rest.contains("password=")
    }

    /// The bus settings when `--nats` was given (with a secret to seal frames with, and a client
    /// certificate with its key); nil otherwise, when no other bus flag may be given.
    static func checked(_ bus: BusSettings, flags: [String]) throws -> BusSettings? {
        guard !bus.url.isEmpty else {
            if let flag = flags.first { throw UsageError(description: "\(flag) goes with --nats") }
            return nil
        }
        guard bus.secret != nil || bus.secretFile != nil else {
            throw UsageError(description: BusSettings.secretMissing)
        }
        guard (bus.certificateFile == nil) == (bus.keyFile == nil) else {
            throw UsageError(description: "--nats-cert and --nats-key go together")
        }
        return bus
    }

    /// `--database` / `CHATD_DATABASE`: a PostgreSQL url.
    static func databaseURL(_ raw: String) throws -> String {
        guard raw.hasPrefix("postgres://") || raw.hasPrefix("postgresql://") else {
            throw UsageError(
                description: "--database wants postgres://user@host:port/database, not \(Log.redacted(raw))")
        }
        return raw
    }

    /// Runs an offline admin command against the database and returns what to print.
    public static func runAdmin(_ command: ChatdCommand, configuration: ServerConfiguration) throws -> String {
        let store = try Store.open(configuration, clock: SystemClock(), connections: 1)
        defer { try? store.close() }
        switch command {
        case .addUser(let uid, let name):
            let request = CreateUserRequest(uid: uid, name: name)
            try Validate.user(request)
            let user = try store.createUser(request)
            try store.audit("user.create", target: user.uid)
            return "created user \(user.uid) (\(user.name))"
        case .token(let uid, let ttl):
            let issued = try store.issueToken(for: uid, ttlSeconds: ttl)
            try store.audit("token.issue", target: issued.uid)
            return issued.authToken
        case .addGroup(let guid, let name, let owner, let type):
            let request = CreateGroupRequest(guid: guid, name: name ?? guid, type: type)
            try Validate.uid(guid, field: "guid")
            try Validate.group(name: request.name, icon: nil, description: nil, metadata: nil, tags: nil, password: nil)
            let group = try store.createGroup(request, by: owner, passwordHash: nil)
            try store.audit("group.create", target: group.guid)
            return "created group \(group.guid) (\(group.name)), owner \(group.owner)"
        case .migrate:
            return "chatd's \(store.engineName) schema is up to date"
        case .newEpoch:
            return "new epoch \(try store.renewEpoch()): clients rebuild their caches on their next sync"
        case .export(let path):
            var lines = 0
            if let path {
                guard
                    FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
                    let file = FileHandle(forWritingAtPath: path)
                else { throw UsageError(description: "cannot write \(path)") }
                defer { try? file.close() }
                try store.export { line in
                    try file.write(contentsOf: Data((line + "\n").utf8))
                    lines += 1
                }
                return "exported \(lines - 1) rows to \(path)"
            }
            try store.export { line in try FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8)) }
            return ""
        case .importFile(let path, let keepEpoch):
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw UsageError(description: "cannot read \(path)")
            }
            let rows = try store.importDeployment(
                lines: text.split(separator: "\n").lazy.map(String.init), keepEpoch: keepEpoch)
            return "imported \(rows) rows"
                + (keepEpoch
                    ? " (the deployment's epoch kept: clients resume)" : " (a new epoch: clients rebuild once)")
        case .importGroupMembers(let guid, let path, let scope):
            let data =
                path == "-"
                ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: path)
            guard let data else { throw UsageError(description: "cannot read \(path)") }
            return try GroupMemberImport.run(
                try GroupMemberImport.parse(String(decoding: data, as: UTF8.self), scope: scope), to: guid, in: store)
        case .addGroupMember(let guid, let uid, let scope):
            let owner = try store.groupOwner(guid)
            let (member, added) = try store.addMember(guid, uid, scope: scope, by: owner)
            if added { try store.audit("group.member.add", target: "\(guid): \(uid)") }
            return added
                ? "added \(member.user.uid) to \(guid) as \(member.scope.rawValue)"
                : "\(member.user.uid) is already in \(guid)"
        default:
            return ""
        }
    }
}
