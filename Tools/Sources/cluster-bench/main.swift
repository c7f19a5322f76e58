// cluster-bench: issue #15's cluster figures on real processes (see docs/PERFORMANCE.md). Three
// release chatd nodes on one PostgreSQL database, nats-server between them, HAProxy in front
// (`ChatTesting.LiveCluster`), all on this machine:
//   1. cross-node delivery: realtime sockets for 300 users on node 1, sends through node 0
//      (200 a second, random sender to random receiver); send → delivery at the receiver's socket.
//   2. changelog replay: a backlog of one user's changes read back from node 2 in pages of 1,000.
//   3. a node's death: SDK clients through HAProxy; a node killed (SIGKILL) and, right after, a
//      message sent to each client through a surviving node; the time from the kill until
//      each client has heard its message, whether its own socket died with the node or not;
//      with the SDK's default timings, then with no settle delay (what chatd and HAProxy take).
// Usage: scripts/with-postgres.sh env CHATD_BINARY=Server/.build/release/chatd \
//            Tools/.build/release/cluster-bench [--sockets 300] [--sends 3000] [--rate 200] [--backlog 5000] [--phones 30] [--kills 3]
import ChatTesting
import Foundation

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil }
        ?? value
}

guard LiveCluster.available else {
    print("cluster-bench: needs CHATD_TEST_POSTGRES (scripts/with-postgres.sh), nats-server and haproxy")
    exit(2)
}

/// Everything runs in here, so the cluster's processes stop when it returns or throws.
func run() async throws {
    // chatd's own defaults (catch-up every 5 s), without the write rate limit: the bench measures throughput.
    let cluster = try LiveCluster(nodes: 3, catchUpSeconds: 5, arguments: ["--write-rate", "0"])
    print(
        "cluster-bench: 3 chatd nodes (\(LiveChatd.binary.path)), PostgreSQL (\(LiveCluster.postgres!)), nats-server, HAProxy"
    )

    let delivery = try await CrossNodeDelivery(cluster: cluster, users: option("--sockets", default: 300))
        .run(sends: option("--sends", default: 3_000), rate: option("--rate", default: 200))
    print(delivery)
    let replay = try await Replay(cluster: cluster).run(backlog: option("--backlog", default: 5_000))
    print(replay)
    for settleDelay in [nil, 0] as [Int64?] {
        let failover = Failover(cluster: cluster, phones: option("--phones", default: 30), settleDelay: settleDelay)
        print(try await failover.run(kills: option("--kills", default: 3)))
    }
}

do {
    try await run()
} catch {
    print("cluster-bench: \(error)")
    exit(1)
}
