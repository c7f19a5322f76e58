import ChatServer
import Foundation
import OfflineChatServerProcess

/// Where a benchmark builds its data and which chatd it talks to: a release chatd it starts
/// itself on a fresh SQLite data directory, or a cluster the caller started
/// (`scripts/bench-groups-cluster.sh`, `scripts/bench-fanout-cluster.sh`).
enum BenchDeployment {
    case sqlite(chatd: URL)
    /// `ports`: where to talk (HAProxy's front, or each node: sockets go to them in turn,
    /// requests to the first); `pids`: the nodes' processes (for their memory); their database.
    case cluster(ports: [Int], pids: [Int32], database: String)

    /// A chatd serving what was built, until `stop()`.
    struct Served {
        let ports: [Int]
        let pids: [Int32]
        fileprivate let process: (process: Process, output: Pipe)?

        func stop() {
            process?.process.terminate()
            process?.process.waitUntilExit()
        }
    }

    /// The cluster that `--cluster PORT,… [--pids PID,…] --database URL` name, else SQLite.
    init(chatd: URL, cluster: String?, pids: String?, database: String?) {
        if let cluster, let database {
            self = .cluster(
                ports: cluster.split(separator: ",").compactMap { Int($0) },
                pids: (pids ?? "").split(separator: ",").compactMap { Int32($0) }, database: database)
        } else {
            self = .sqlite(chatd: chatd)
        }
    }

    var isCluster: Bool { if case .cluster = self { true } else { false } }

    /// A store to build in: `data`'s (a fresh SQLite directory) or the cluster's database.
    func store(_ data: URL) throws -> Store {
        switch self {
        case .sqlite: try Store(directory: data, clock: SystemClock(), readers: 1)
        case .cluster(_, _, let database): try Store(postgres: database, clock: SystemClock(), connections: 8)
        }
    }

    /// chatd serving what was built: a release chatd on `data` (no write limit, `arguments`
    /// besides), or the cluster as it runs.
    func serve(_ data: URL, _ arguments: [String] = []) throws -> Served {
        switch self {
        case .sqlite(let chatd):
            let (process, output, port) = try ServerProcess.startChatd(
                chatd,
                ["--data", data.path, "--port", "0", "--admin-key", benchAdminKey, "--write-rate", "0"] + arguments)
            return Served(ports: [port], pids: [process.processIdentifier], process: (process, output))
        case .cluster(let ports, let pids, _):
            return Served(ports: ports, pids: pids, process: nil)
        }
    }
}
