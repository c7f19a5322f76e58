import CEpoll
import ChatServer
import Foundation
import Glibc
import OfflineChatLocking
import OfflineChatProtocol
import OfflineChatServerProcess
import OfflineChatWebSocket

/// `chatd-bench CHATD --fanout 10000`: a group message reaching every connected member (issue
/// #42). On a fresh SQLite data directory, N users each with a token join one group (bulk adds
/// through the store, in-process); a release chatd serves it and each member opens one realtime
/// socket. Then:
/// 1. chatd's resident memory before the sockets and after all N said hello: the memory a
///    connected socket costs it;
/// 2. `--fanout-sends` messages into the group, one at a time (each waits until every member
///    has it): the latency from the send to each member's frame (p50, p99, max, over every
///    member of every send) and to the last member of each send;
/// 3. the baseline of the same run: a one-to-one message to one member's socket, timed the same
///    way while the N sockets stay connected.
/// The N sockets are read by one thread polling them all with `epoll` (a thread each would cost
/// the two cores more than chatd's writes), so its delay is part of every figure.
enum FanOutBench {
    /// One member's socket as the reading thread sees it.
    final class Member: @unchecked Sendable {
        let stream: PlainStream
        var parser: WebSocketParser
        init(stream: PlainStream, parser: WebSocketParser) {
            self.stream = stream
            self.parser = parser
        }
    }

    /// What the reading thread counted, read by the sending one.
    struct Tally {
        var hellos = 0
        var group = Latencies()
        var direct = Latencies()
        var other = 0
    }

    static func run(_ deployment: BenchDeployment, members: Int, sends: Int) throws {
        // This process holds a descriptor per socket (chatd raises its own limit likewise).
        let files = MicroHTTPServer.raiseFileLimit(for: members)
        guard files > members + 64 else {
            throw ConnectionError("fan-out: \(members) sockets need more open files than this host allows (\(files))")
        }
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("fanout-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        print("fan-out to \(members) sockets: building the group …")
        let tokens = try build(try deployment.store(data), members: members)
        let served = try deployment.serve(data, ["--max-connections", String(members + 100)])
        defer { served.stop() }
        let (ports, pids) = (served.ports, served.pids)
        let idle = pids.reduce(0) { $0 + residentBytes($1) }

        let began = now()
        var sockets: [Member] = []
        for (index, token) in tokens.members.enumerated() {
            let port = ports[index % ports.count]
            let stream = PlainStream(fd: try Socket.connect(host: "127.0.0.1", port: port))
            let parser = try WebSocketClient.handshake(
                on: stream, path: URL(string: "ws://127.0.0.1/v1/realtime?groupLogs=true&cursorFrames=true")!,
                hostHeader: "127.0.0.1:\(port)", headers: ["Authorization": "Bearer \(token)"])
            sockets.append(Member(stream: stream, parser: parser))
        }
        let tally = Locked(Tally())
        let stop = Locked(false)
        let connectedSockets = sockets
        let reader = Thread { read(connectedSockets, into: tally, until: stop) }
        reader.stackSize = 1 << 20
        reader.start()
        try wait("every hello", seconds: 120) { tally.withLock { $0.hellos } >= members }
        let connectSeconds = Double(now() - began) / 1e9
        let connected = pids.reduce(0) { $0 + residentBytes($1) }

        let client = try BenchHTTPClient(port: ports[0])
        for index in 0..<sends {
            try client.send(
                SendMessageRequest(muid: "g\(index)", receiver: "big", receiverType: .group, text: "\(now()) g"),
                token: tokens.owner)
            try wait("send \(index) to every member", seconds: 60) {
                tally.withLock { $0.group.samples.count } >= (index + 1) * members
            }
        }
        for index in 0..<sends {
            try client.send(
                SendMessageRequest(muid: "d\(index)", receiver: "m1", text: "\(now()) d"), token: tokens.outsider)
            try wait("direct \(index)", seconds: 60) { tally.withLock { $0.direct.samples.count } > index }
        }
        let delivered = pids.reduce(0) { $0 + residentBytes($1) }
        stop.withLock { $0 = true }
        let result = tally.withLock { $0 }
        let lastOfEach = Latencies(
            samples: stride(from: 0, to: result.group.samples.count, by: members).map {
                result.group.samples[$0..<min($0 + members, result.group.samples.count)].max() ?? 0
            })
        let setting =
            !deployment.isCluster
            ? "release chatd on SQLite"
            : "\(ports.count) chatd nodes on PostgreSQL + NATS, the sockets spread over them, the sends through the first"
        let nodesSuffix = deployment.isCluster ? "'s nodes" : ""
        print(
            """

            fan-out (\(setting), loopback; \(members) members of one group, one socket each)
              sockets             \(members) connected and greeted in \(format(connectSeconds, 1)) s
              memory              chatd\(nodesSuffix) \(idle / 1024) KiB idle, \(connected / 1024) KiB with the sockets = \
            \(format(Double(connected - idle) / Double(members) / 1024, 1)) KiB a socket \
            (\(delivered / 1024) KiB after the sends)
              group send → every  p50 \(format(result.group.percentile(0.5), 1)) ms, p99 \
            \(format(result.group.percentile(0.99), 1)) ms, max \(format(result.group.percentile(1), 1)) ms \
            over \(result.group.samples.count) frames; the last member of a send: median \
            \(format(lastOfEach.percentile(0.5), 1)) ms
              one-to-one baseline p50 \(format(result.direct.percentile(0.5), 2)) ms, p99 \
            \(format(result.direct.percentile(0.99), 2)) ms (\(sends) messages to one of the sockets) \
            = group p99 / one-to-one p99 \(format(result.group.percentile(0.99) / result.direct.percentile(0.99), 1)) ×
            """)
        if result.other > 0 { print("  (\(result.other) frames of other kinds)") }
        reader.cancel()
    }

    /// The members' tokens, the group's owner's (m0) and an outsider's, on a fresh store (the
    /// users by eight writers: PostgreSQL flushes each commit, and concurrent ones share it).
    static func build(_ store: Store, members: Int) throws -> (members: [String], owner: String, outsider: String) {
        defer { try? store.close() }
        let issued = Locked([String](repeating: "", count: members))
        _ = parallel(8) { worker in
            for index in stride(from: worker, to: members, by: 8) {
                _ = try store.createUser(CreateUserRequest(uid: "m\(index)"))
                let token = try store.issueToken(for: "m\(index)", ttlSeconds: 86_400).authToken
                issued.withLock { $0[index] = token }
            }
        }
        let tokens = issued.withLock { $0 }
        guard !tokens.contains("") else { throw ConnectionError("fan-out: some users were not created") }
        _ = try store.createUser(CreateUserRequest(uid: "outsider"))
        let outsider = try store.issueToken(for: "outsider", ttlSeconds: 86_400).authToken
        _ = try store.createGroup(CreateGroupRequest(guid: "big", name: "big"), by: "m0", passwordHash: nil)
        for start in stride(from: 1, to: members, by: AddMembersRequest.maxCount) {
            let chunk = (start..<min(members, start + AddMembersRequest.maxCount)).map {
                AddMemberRequest(uid: "m\($0)")
            }
            _ = try store.addMembers("big", chunk, by: "m0")
        }
        return (tokens, tokens[0], outsider)
    }

    /// Reads every socket until `stop`: hellos counted, each message's latency taken from the
    /// send time at the start of its text, pings answered.
    static func read(_ sockets: [Member], into tally: Locked<Tally>, until stop: Locked<Bool>) {
        let poller = epoll_create1(0)
        defer { close(poller) }
        for (index, member) in sockets.enumerated() {
            _ = fcntl(member.stream.fd, F_SETFL, fcntl(member.stream.fd, F_GETFL) | O_NONBLOCK)
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = UInt64(index)
            epoll_ctl(poller, EPOLL_CTL_ADD, member.stream.fd, &event)
        }
        var events = [epoll_event](repeating: epoll_event(), count: 1_024)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let textKey = Array("\"text\":\"".utf8)
        let helloKey = Array("\"type\":\"hello\"".utf8)
        // Each socket's buffered messages first: its handshake may have read its hello.
        var pending = Array(sockets.indices)
        while !stop.withLock({ $0 }) {
            for index in pending {
                let member = sockets[index]
                while let message = try? member.parser.next() {
                    switch message {
                    case .text(var json):
                        let arrived = now()
                        json.withUTF8 { utf8 in
                            let bytes = UnsafeRawBufferPointer(utf8)
                            if find(helloKey, in: bytes) != nil {
                                tally.withLock { $0.hellos += 1 }
                                return
                            }
                            guard let key = find(textKey, in: bytes) else { return }
                            let words = bytes[(key + textKey.count)...].prefix { $0 != UInt8(ascii: "\"") }
                                .split(separator: UInt8(ascii: " "))
                            guard words.count == 2, let sentAt = UInt64(String(decoding: words[0], as: UTF8.self))
                            else {
                                tally.withLock { $0.other += 1 }
                                return
                            }
                            let latency = arrived &- sentAt
                            tally.withLock {
                                if words[1].first == UInt8(ascii: "g") {
                                    $0.group.samples.append(latency)
                                } else {
                                    $0.direct.samples.append(latency)
                                }
                            }
                        }
                    case .ping(let payload):
                        try? member.stream.write(Frame(opcode: .pong, payload: payload).encoded(mask: [7, 7, 7, 7]))
                    default: break
                    }
                }
            }
            let ready = Int(epoll_wait(poller, &events, Int32(events.count), 100))
            pending = []
            for event in events.prefix(max(0, ready)) {
                let index = Int(event.data.u64)
                let fd = sockets[index].stream.fd
                while true {
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                    guard count > 0 else { break }
                    sockets[index].parser.append(buffer.prefix(count))
                }
                pending.append(index)
            }
        }
    }

    /// Waits (polling every millisecond) until `done`, or throws after `seconds`.
    static func wait(_ what: String, seconds: Double, until done: () -> Bool) throws {
        let deadline = now() + UInt64(seconds * 1e9)
        while !done() {
            guard now() < deadline else { throw ConnectionError("fan-out: \(what) did not arrive in \(seconds) s") }
            usleep(1_000)
        }
    }

    /// The resident memory of process `pid` (`VmRSS`), in bytes.
    static func residentBytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}
