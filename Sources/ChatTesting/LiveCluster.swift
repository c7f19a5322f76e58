#if os(Linux) || os(macOS)  // child processes: not on iOS
import Foundation
import OfflineChatServerProcess
#if canImport(Glibc)
import Glibc
#endif

/// chatd as a cluster, for tests: `nodes` chatd processes on one fresh PostgreSQL database
/// (on the server `$CHATD_TEST_POSTGRES` names), `nats-server` between them, one shared media
/// directory, and HAProxy in front of them all (`url`). A node can be killed (SIGKILL) and
/// started again on its port while clients keep using `url`.
public final class LiveCluster: @unchecked Sendable {  // immutable after init; the processes are stopped in deinit
    /// chatd's nodes; each also answers directly (`nodes[i].url`), and the admin requests of
    /// `LiveChatd` work on any of them.
    public let nodes: [LiveChatd]
    /// HAProxy's address: what clients use.
    public let url: URL
    private let nats: NatsServer
    private let haproxy: Process
    private let directory: URL

    /// The PostgreSQL server to make the cluster's database on (`postgres://user@host:port`).
    public static let postgres = ProcessInfo.processInfo.environment["CHATD_TEST_POSTGRES"].flatMap {
        $0.isEmpty ? nil : $0
    }
    static let haproxyBinary = "/usr/sbin/haproxy"
    static let psql = "/usr/bin/psql"

    /// PostgreSQL, nats-server and HAProxy are all here (`make test` installs them).
    public static var available: Bool {
        postgres != nil
            && [NatsServer.binary, haproxyBinary, psql].allSatisfy(FileManager.default.isExecutableFile(atPath:))
    }

    /// `catchUpSeconds`: each node's `--catch-up` (how soon a socket notices what the bus lost,
    /// and how soon a dead node's users go offline: three of them); `arguments`: more flags for
    /// every node.
    public init(nodes count: Int = 3, catchUpSeconds: Double = 0.2, arguments: [String] = []) throws {
        guard let postgres = Self.postgres else {
            throw LiveChatd.Failure("set CHATD_TEST_POSTGRES (scripts/with-postgres.sh)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatd-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let database = try ServerProcess.createDatabase(on: postgres, psql: Self.psql)

        let nats = try NatsServer()
        // A failure past here stops what already runs (deinit does not run for an object whose init threw).
        var nodes: [LiveChatd] = []
        do {
            let shared =
                [
                    "--database", database, "--catch-up", "\(catchUpSeconds)",
                    "--media", directory.appendingPathComponent("media").path
                ] + nats.chatdArguments + arguments
            for index in 0..<count { nodes.append(try LiveChatd(arguments: shared + ["--node-id", "node\(index)"])) }
            let port = try Self.freePort()
            let configuration = directory.appendingPathComponent("haproxy.cfg")
            try Self.haproxyConfiguration(port: port, nodes: nodes.map(\.port)).write(
                to: configuration, atomically: true, encoding: .utf8)
            haproxy = try Self.start(
                Self.haproxyBinary, ["-f", configuration.path, "-db", "-V"], readyWhen: "as the polling mechanism")
            url = URL(string: "http://127.0.0.1:\(port)")!
        } catch {
            nats.stop()
            for node in nodes { node.stop() }
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        self.nats = nats
        self.nodes = nodes
    }

    deinit {
        ServerProcess.end(haproxy)
        nats.stop()
        for node in nodes { node.stop() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// `scripts/haproxy.cfg` filled in: health-checked every 100 ms, down after two failures, up after one
    /// success; a request whose node refuses the connection is tried on another one.
    static func haproxyConfiguration(port: Int, nodes: [Int]) throws -> String {
        let template = LiveChatd.repository.appendingPathComponent("scripts/haproxy.cfg")
        let servers = nodes.enumerated().map { "    server node\($0.offset) 127.0.0.1:\($0.element) check\n" }.joined()
        return try String(contentsOf: template, encoding: .utf8)
            .replacingOccurrences(of: "@PORT@", with: "\(port)")
            .replacingOccurrences(of: "@BALANCE@", with: "leastconn")
            .replacingOccurrences(of: "@CHECK_INTERVAL@", with: "100ms")
            .replacingOccurrences(of: "@RISE@", with: "1")
            .replacingOccurrences(of: "@SERVERS@", with: servers)
    }

    /// Starts a server and returns once it printed `ready` (on either output).
    static func start(_ binary: String, _ arguments: [String], readyWhen ready: String) throws -> Process {
        let (process, output, _) = try ServerProcess.start(
            URL(fileURLWithPath: binary), arguments, errorsToo: true, readyWhen: ready)
        // Keep draining what it prints, or a full pipe would stop it.
        output.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        return process
    }

    /// A loopback port nobody listens on at this moment.
    static func freePort() throws -> Int {
        let (fd, port) = try Loopback.listen()
        close(fd)
        return port
    }
}
#endif
