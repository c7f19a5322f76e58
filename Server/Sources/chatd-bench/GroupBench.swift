import ChatServer
import Foundation
import OfflineChatProtocol
import OfflineChatServerProcess
import OfflineChatWebSocket

/// `chatd-bench CHATD --groups 1000,10000,100000`: what a group's size costs (issue #42). For
/// each size, on a fresh SQLite data directory:
/// 1. the users are created, then added through the store (in-process, no HTTP) in bulk adds
///    of 1,000 (`POST …/members` with `members`), the last 100 one by one: the time of the
///    adds, of each of the last ones, and what the adds grew the database by, a member; a build
///    that would outlast `--group-budget` seconds (default 120) stops there and the rest is
///    measured at the size it reached;
/// 2. a release chatd serves it: a send into the group and a one-to-one send, alternated one at
///    a time (median and p99 latency), then each from 8 connections at once (sends/s);
/// 3. catch-up: 1,000 group messages read back by a member from their cursor, against 1,000
///    direct messages read back by another user (median of 5 passes).
/// Every figure is set against the one-to-one one of the same run.
enum GroupBench {
    struct Result {
        var target: Int
        var members: Int
        var buildSeconds: Double
        var lastJoinMs: Double
        var bytesPerMember: Double
        var group: Latencies
        var direct: Latencies
        var groupRate: Double
        var directRate: Double
        var groupCatchUp: Double
        var directCatchUp: Double
    }

    static func run(_ deployment: BenchDeployment, sizes: [Int], budget: Double, sends: Int) throws {
        var results: [Result] = []
        for size in sizes {
            print("group of \(size): building …")
            results.append(try measure(deployment, size: size, budget: budget, sends: sends))
        }
        print(
            deployment.isCluster
                ? "\ngroups by size (three chatd nodes on PostgreSQL + NATS behind HAProxy; ratios against one-to-one"
                    + " sends through the same front in the same run)"
                : "\ngroups by size (release chatd on SQLite, loopback; ratios against one-to-one sends in the same run)"
        )
        for result in results { print(report(result)) }
    }

    static func report(_ r: Result) -> String {
        let reached = r.members == r.target ? "" : " (stopped at \(r.members) of \(r.target): the build's budget)"
        return """
              \(r.target) members\(reached)
                adds                 \(format(r.buildSeconds, 1)) s (1,000 a call), the last 100 one by one \(format(r.lastJoinMs, 2)) ms each, \(format(r.bytesPerMember)) bytes a member
                a send, alone        group p50 \(format(r.group.percentile(0.5), 2)) ms p99 \(format(r.group.percentile(0.99), 2)) ms; one-to-one p50 \(format(r.direct.percentile(0.5), 2)) ms = \(format(r.group.percentile(0.5) / r.direct.percentile(0.5), 2)) ×
                sends from 8         group \(format(r.groupRate)) sends/s; one-to-one \(format(r.directRate)) sends/s = \(format(r.directRate / r.groupRate, 2)) × the group's
                catch-up of 1,000    group \(format(r.groupCatchUp * 1000, 1)) ms; direct \(format(r.directCatchUp * 1000, 1)) ms = \(format(r.groupCatchUp / r.directCatchUp, 2)) ×
            """
    }

    static func measure(_ deployment: BenchDeployment, size: Int, budget: Double, sends: Int) throws -> Result {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("group-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let store = try deployment.store(data)
        // The group, its owner m0 who sends, m1 a member who catches up, d1 and d2 who talk one
        // to one; each size's names of its own on the cluster (its sizes share a database).
        let (guid, prefix) = deployment.isCluster ? ("big\(size)", "s\(size)-") : ("big", "")
        @Sendable func uid(_ name: String) -> String { prefix + name }
        var tokens: [String: String] = [:]
        for name in ["m0", "m1", "d1", "d2"] {
            _ = try store.createUser(CreateUserRequest(uid: uid(name)))
            tokens[name] = try store.issueToken(for: uid(name), ttlSeconds: 86_400).authToken
        }
        _ = try store.createGroup(CreateGroupRequest(guid: guid, name: guid), by: uid("m0"), passwordHash: nil)
        _ = try store.addMember(guid, uid("m1"), scope: .participant, by: uid("m0"))
        // PostgreSQL commits each user with a flush: eight writers share them (group commit).
        let writers = deployment.isCluster ? 8 : 1
        _ = parallel(writers) { worker in
            for index in stride(from: 2 + worker, to: size, by: writers) {
                _ = try store.createUser(CreateUserRequest(uid: uid("m\(index)")))
            }
        }
        let usersBytes = try store.databaseBytes()
        let began = now()
        var members = 2
        var joins: [UInt64] = []
        while members < size, Double(now() - began) / 1e9 <= budget {
            if size - members > 100 {
                let chunk = (members..<min(size - 100, members + AddMembersRequest.maxCount)).map {
                    AddMemberRequest(uid: uid("m\($0)"))
                }
                _ = try store.addMembers(guid, chunk, by: uid("m0"))
                members += chunk.count
            } else {
                let joinStart = now()
                _ = try store.addMember(guid, uid("m\(members)"), scope: .participant, by: uid("m0"))
                joins.append(now() - joinStart)
                members += 1
            }
        }
        let buildSeconds = Double(now() - began) / 1e9
        let lastJoinMs = joins.isEmpty ? 0 : Double(joins.reduce(0, +)) / Double(joins.count) / 1e6
        let bytes = try store.databaseBytes() - usersBytes
        try store.close()

        let served = try deployment.serve(data)
        defer { served.stop() }
        let port = served.ports[0]
        var client = try BenchHTTPClient(port: port)
        func send(_ from: String, _ receiver: String, _ type: ReceiverType, _ muid: String) throws {
            try client.send(
                SendMessageRequest(
                    muid: muid, receiver: type == .group ? guid : uid(receiver), receiverType: type, text: "hello"),
                token: tokens[from]!)
        }
        var group = Latencies()
        var direct = Latencies()
        for index in 0..<sends {
            var start = now()
            try send("m0", guid, .group, "g\(size)-\(index)")
            group.samples.append(now() - start)
            start = now()
            try send("d1", "d2", .user, "d\(size)-\(index)")
            direct.samples.append(now() - start)
        }
        let rateSends = sends * 2
        let tokensNow = tokens
        func rate(_ from: String, _ receiver: String, _ type: ReceiverType, _ tag: String) -> Double {
            let seconds = parallel(8) { worker in
                let client = try BenchHTTPClient(port: port)
                for index in 0..<(rateSends / 8) {
                    try client.send(
                        SendMessageRequest(
                            muid: "\(tag)\(size)-\(worker)-\(index)", receiver: receiver, receiverType: type,
                            text: "load"),
                        token: tokensNow[from]!)
                }
            }
            return Double(rateSends) / seconds
        }
        let groupRate = rate("m0", guid, .group, "rg")
        let directRate = rate("d1", uid("d2"), .user, "rd")

        // Catch-up: each reader's cursor now, 1,000 messages to each, then the read back. A new
        // connection: chatd closes one left idle while the loads above ran.
        client = try BenchHTTPClient(port: port)
        let groupCursor = try head(client, token: tokens["m1"]!)
        let directCursor = try head(client, token: tokens["d2"]!)
        for index in 0..<1_000 {
            try send("m0", guid, .group, "cg\(size)-\(index)")
            try send("d1", "d2", .user, "cd\(size)-\(index)")
        }
        let groupCatchUp = try median(5) { try catchUp(client, from: groupCursor, token: tokens["m1"]!) }
        let directCatchUp = try median(5) { try catchUp(client, from: directCursor, token: tokens["d2"]!) }
        return Result(
            target: size, members: members, buildSeconds: buildSeconds, lastJoinMs: lastJoinMs,
            bytesPerMember: Double(bytes) / Double(max(1, members - 2)), group: group, direct: direct,
            groupRate: groupRate,
            directRate: directRate, groupCatchUp: groupCatchUp, directCatchUp: directCatchUp)
    }

    /// The head cursor of the token's user (a changelog read with an empty cursor).
    static func head(_ client: BenchHTTPClient, token: String) throws -> String {
        let (status, body) = try client.request("GET", "/v1/changes?cursor=", token: token, keepingLast: 4_096)
        guard status == 200 else { throw ConnectionError("changes answered \(status)") }
        return try JSONDecoder().decode(ChangelogPage.self, from: Data(body)).cursor
    }

    /// Reads every change after `cursor`, 1,000 a page; the seconds it took.
    static func catchUp(_ client: BenchHTTPClient, from cursor: String, token: String) throws -> Double {
        var cursor = cursor
        let began = now()
        while true {
            let (status, tail) = try client.request(
                "GET", "/v1/changes?cursor=\(cursor)&limit=1000", token: token, keepingLast: 512)
            guard status == 200 else { throw ConnectionError("changes answered \(status)") }
            let (next, hasMore) = try pageEnd(tail)
            cursor = next
            if !hasMore { break }
        }
        return Double(now() - began) / 1e9
    }

    static func median(_ passes: Int, _ body: () throws -> Double) throws -> Double {
        let times = try (0..<passes).map { _ in try body() }.sorted()
        return times[passes / 2]
    }
}
