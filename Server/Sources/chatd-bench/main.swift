import ChatServer
import Foundation
import OfflineChatLocking
import OfflineChatProtocol
import OfflineChatServerProcess
import OfflineChatWebSocket
import Synchronization

// chatd-bench: measures a release chatd process on loopback against a baseline taken in the
// same run (a trivial GET /v1/health on the same server), so the report shows the cost of
// chatd's layers over libmicrohttpd. The baseline is taken again after each measurement, and
// each is set against the mean of the baselines just before and after it: this host's speed
// drifts by a fifth within minutes.
//
// usage: chatd-bench PATH-TO-CHATD [--sends N] [--backlog N] [--threads N (chatd's HTTP threads; its default)]
//                    [--database URL (a fresh PostgreSQL database of its own; SQLite otherwise)]
//        chatd-bench PATH-TO-CHATD --groups 1000,10000,100000 [--group-budget SECONDS] [--group-sends N]
//                    [--cluster PORT --database URL (a running cluster's front: scripts/bench-groups-cluster.sh)]
//                    (what a group's size costs: GroupBench.swift)
//        chatd-bench PATH-TO-CHATD --fanout 10000 [--fanout-sends N]
//                    [--cluster PORT,… --pids PID,… --database URL (a running cluster's nodes)]
//                    (one group message to every connected member: FanOutBench.swift)
//        chatd-bench --help (this usage)

let arguments = CommandLine.arguments
let usage = """
    usage: chatd-bench PATH-TO-CHATD [--sends N] [--backlog N] [--threads N] [--database URL]
           chatd-bench PATH-TO-CHATD --groups 1000,10000,100000 [--group-budget SECONDS] [--group-sends N]
                       [--cluster PORT --database URL]
           chatd-bench PATH-TO-CHATD --fanout 10000 [--fanout-sends N] [--cluster PORT,… --pids PID,… --database URL]
    """
/// Says what is wrong on standard error and ends with status 2.
func refuse(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}
if arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
guard arguments.count >= 2, !arguments[1].hasPrefix("-") else { refuse(usage) }
guard FileManager.default.isExecutableFile(atPath: arguments[1]) else {
    refuse("no chatd to run at \(arguments[1])\n\(usage)")
}
/// The argument after `name`, if given.
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
func option(_ name: String, _ fallback: Int) -> Int { option(name).flatMap { Int($0) } ?? fallback }
/// PostgreSQL at this URL instead of SQLite in a temporary directory.
/// `--cluster PORT,… [--pids PID,…] --database URL`: a running cluster (`--groups`, `--fanout`).
let clusterOrSQLite = BenchDeployment(
    chatd: URL(fileURLWithPath: arguments[1]), cluster: option("--cluster"), pids: option("--pids"),
    database: option("--database"))
if let sizes = option("--groups") {
    do {
        try GroupBench.run(
            clusterOrSQLite, sizes: sizes.split(separator: ",").compactMap { Int($0) },
            budget: Double(option("--group-budget", 120)), sends: option("--group-sends", 200))
    } catch {
        refuse("chatd-bench --groups: \(error)")
    }
    exit(0)
}
if let members = option("--fanout").flatMap({ Int($0) }) {
    do {
        try FanOutBench.run(clusterOrSQLite, members: members, sends: option("--fanout-sends", 20))
    } catch {
        refuse("chatd-bench --fanout: \(error)")
    }
    exit(0)
}
let database = option("--database")
let totalSends = option("--sends", 20_000)
let backlogSize = option("--backlog", 100_000)
let clients = 50
let workers = 8

let data = FileManager.default.temporaryDirectory.appendingPathComponent("chatd-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: data) }

// Users, tokens and the replay backlog are written straight into the data dir (in-process
// store, with chatd's allocator settings), then the real chatd serves them.
MemoryAllocator.keepFreedMemory()
print("preparing \(clients) users and a \(backlogSize)-change backlog …")
let backlogStart = now()
var backlogSeconds = 0.0
let (tokens, storeSendRate): ([String], Double) = try {
    var tokens: [String] = []
    let store =
        try database.map { try Store(postgres: $0, clock: SystemClock()) }
        ?? Store(directory: data, clock: SystemClock(), readers: 1)
    for index in 0..<clients {
        _ = try store.createUser(CreateUserRequest(uid: "u\(index)"))
        tokens.append(try store.issueToken(for: "u\(index)", ttlSeconds: 86_400).authToken)
    }
    _ = try store.createUser(CreateUserRequest(uid: "archive"))
    for index in 0..<backlogSize {
        _ = try store.send(
            from: "archive", SendMessageRequest(muid: "b\(index)", receiver: "u0", text: "backlog \(index)"))
    }
    backlogSeconds = Double(now() - backlogStart) / 1e9
    // The store alone: step 3's sends from as many threads, straight into `Store.send` (group
    // commit and all) with no HTTP in front: the most sends per second chatd could answer.
    let seconds = parallel(workers) { worker in
        var random = SystemRandomNumberGenerator()
        for index in 0..<(totalSends / workers) {
            let (from, to) = randomPair(among: clients, using: &random)
            _ = try store.send(
                from: "u\(from)", SendMessageRequest(muid: "s\(worker)-\(index)", receiver: "u\(to)", text: "store"))
        }
    }
    try store.close()
    return (tokens, Double(totalSends) / seconds)
}()

// `output` stays referenced while chatd runs (a closed pipe would cost it its log lines).
let (process, output, port) = try ServerProcess.startChatd(
    URL(fileURLWithPath: arguments[1]),
    (database.map { ["--database", $0] } ?? ["--data", data.path]) + [
        "--port", "0", "--admin-key", benchAdminKey, "--write-rate", "0"
    ]
        + (arguments.contains("--threads") ? ["--threads", String(option("--threads", 4))] : []))
defer {
    process.terminate()
    process.waitUntilExit()
}

print("chatd up on port \(port); baseline GETs …")
// 1. Baseline: trivial GET, from 8 connections.
func healthRate() -> Double {
    let healthCount = totalSends
    let healthSeconds = parallel(workers) { worker in
        let client = try BenchHTTPClient(port: port)
        for _ in 0..<(healthCount / workers) { _ = try client.request("GET", "/v1/health", keepingLast: 0) }
    }
    return Double(healthCount) / healthSeconds
}
var baselines = [healthRate()]
/// The baseline around the measurement just made: the mean of the one before it and one taken now.
@MainActor func baselineAround() -> Double {
    baselines.append(healthRate())
    return (baselines[baselines.count - 2] + baselines[baselines.count - 1]) / 2
}

// 2. 50 realtime clients; each records send→delivery latency of messages addressed to it (a
// message's text is the time it was sent, then "hello"; or when it was due, then "paced").
let latencies = Locked(Latencies())
let pacedLatencies = Locked(Latencies())
let delivered = Atomic<Int>(0)
var sockets: [WebSocketClient] = []
for token in tokens {
    let socket = try WebSocketClient.connect(
        to: URL(string: "ws://127.0.0.1:\(port)/v1/realtime")!,
        headers: ["Authorization": "Bearer \(token)"])
    _ = try socket.receive()  // hello
    sockets.append(socket)
}
let readers = DispatchGroup()
let dropped = Atomic<Int>(0)
for (index, socket) in sockets.enumerated() {
    readers.enter()
    Thread {
        defer { readers.leave() }
        let me = Array("\"receiver\":\"u\(index)\"".utf8)
        let textKey = Array("\"text\":\"".utf8)
        while true {
            let message = try? socket.receive()
            // chatd pings every 20 s (a run on PostgreSQL lasts longer): the client has answered.
            if case .ping = message { continue }
            guard case .text(var json) = message else {
                dropped.add(1, ordering: .relaxed)
                return
            }
            // A byte search instead of a decode, so the client does not slow the server down.
            let found = json.withUTF8 { utf8 -> String? in
                let bytes = UnsafeRawBufferPointer(utf8)
                guard find(me, in: bytes) != nil, let key = find(textKey, in: bytes) else { return nil }
                let start = key + textKey.count
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) ?? bytes.count
                return String(decoding: bytes[start..<end], as: UTF8.self)
            }
            guard let text = found else { continue }
            if text == "END" { return }
            let words = text.split(separator: " ")
            guard let sentAt = UInt64(words.first ?? "") else { continue }
            let latency = now() - sentAt
            (words.last == "paced" ? pacedLatencies : latencies).withLock { $0.samples.append(latency) }
            delivered.add(1, ordering: .relaxed)
        }
    }.start()
}

print("\(clients) realtime clients connected; sending …")
// 3. Sends from 8 connections, random sender → receiver among the 50; each send's own
// round trip is kept too, so delivery's latency can be read against it.
let sendLatencies = Locked(Latencies())
let sendSeconds = parallel(workers) { worker in
    let client = try BenchHTTPClient(port: port)
    var random = SystemRandomNumberGenerator()
    for index in 0..<(totalSends / workers) {
        let (from, to) = randomPair(among: clients, using: &random)
        let sentAt = now()
        try client.send(
            SendMessageRequest(muid: "w\(worker)-\(index)", receiver: "u\(to)", text: "\(sentAt) hello"),
            token: tokens[from])
        let answered = now() - sentAt
        sendLatencies.withLock { $0.samples.append(answered) }
    }
}
let sendRate = Double(totalSends) / sendSeconds
// The same sends at half that rate, on a schedule (open loop): each is timed from when it was
// due, so a send the server held up also counts against the ones it delayed. The closed loop
// above measures delivery at the most sends chatd answers; this, with room to spare.
let pacedSends = totalSends / 2
let pacedStart = now() + 10_000_000
_ = parallel(workers) { worker in
    let client = try BenchHTTPClient(port: port)
    var random = SystemRandomNumberGenerator()
    for index in 0..<(pacedSends / workers) {
        let due = pacedStart + UInt64(Double(index * workers + worker) / (sendRate / 2) * 1e9)
        let early = Int64(due) - Int64(now())
        if early > 0 { usleep(useconds_t(early / 1_000)) }
        let (from, to) = randomPair(among: clients, using: &random)
        try client.send(
            SendMessageRequest(muid: "p\(worker)-\(index)", receiver: "u\(to)", text: "\(due) paced"),
            token: tokens[from])
    }
}
print("sent; waiting for deliveries …")
// An END marker to every client: per-socket order means all earlier deliveries arrived.
let marker = try BenchHTTPClient(port: port)
for index in 0..<clients {
    let body = try JSONEncoder().encode(SendMessageRequest(muid: "end-\(index)", receiver: "u\(index)", text: "END"))
    _ = try marker.request("POST", "/v1/messages", token: tokens[(index + 1) % clients], body: Array(body))
}
readers.wait()
for socket in sockets { socket.shutdown() }
let sendBaseline = baselineAround()

print("reading history and conversation lists …")
// 4. A page of history (the newest 30 of a busy conversation) and the conversation list, each
// from 8 connections as the users in turn, against the same baseline. Each user's path is
// built once, and the answers' bodies are read past: the baseline's requests pay neither.
// History reads as many as the baseline, about as long (a fifth of a second was at the mercy
// of one stall of this host); the list, ten times as slow, a quarter as many.
func readRate(_ reads: Int, _ path: (_ user: Int) -> String) -> Double {
    let targets = (0..<clients).map(path)
    let seconds = parallel(workers) { worker in
        let client = try BenchHTTPClient(port: port)
        for index in 0..<(reads / workers) {
            let user = (index * workers + worker) % clients  // the workers on different users
            let (status, _) = try client.request("GET", targets[user], token: tokens[user], keepingLast: 0)
            guard status == 200 else { throw ConnectionError("\(targets[user]) answered \(status)") }
        }
    }
    return Double(reads) / seconds
}
let historyRate = readRate(totalSends) { user in
    "\(Endpoints.conversations)/\(ConversationPayload.directID("u\(user)", "u\((user + 1) % clients)"))/messages?limit=30"
}
let historyBaseline = baselineAround()
let listRate = readRate(totalSends / 4) { _ in "\(Endpoints.conversations)?limit=30" }
let listBaseline = baselineAround()

print("replaying the changelog …")
// 5. Changelog replay of the backlog (u0's view), 1000 changes a page, from the start five
// times: a pass is a few milliseconds, so one pass is at the mercy of a single stall of this
// shared host. The median pass is reported, with every pass's time a page.
let replayer = try BenchHTTPClient(port: port)
// The start of u0's log: the head cursor's epoch at position 0.
let replayStart: String = try {
    guard case .logs(let epoch, _, _) = ChangelogCursor.parse(try GroupBench.head(replayer, token: tokens[0])) else {
        throw ConnectionError("the head is not a c3 cursor")
    }
    return ChangelogCursor.encode(epoch: epoch, position: 0, groups: [:])
}()
@MainActor func replayPass() throws -> (seconds: Double, pages: Int, changes: Int) {
    var (cursor, position) = (replayStart, Int64(0))
    var pages = 0
    let began = now()
    while true {
        // Only the page's tail is kept (its cursor and `hasMore`): the figure is chatd's, not
        // the client's. A scan of the whole page for its changes cost the bench a third of the
        // page's time; the cursor's position counts them (changes of every kind of u0's own
        // log, from position 0, as nothing is pruned here).
        let (status, tail) = try replayer.request(
            "GET", "/v1/changes?cursor=\(cursor)&limit=1000", token: tokens[0], keepingLast: 512)
        guard status == 200 else { throw ConnectionError("changes answered \(status)") }
        pages += 1
        let (next, hasMore) = try pageEnd(tail)
        cursor = next
        guard case .logs(_, let reached, _) = ChangelogCursor.parse(cursor) else {
            throw ConnectionError("not a position cursor: \(cursor)")
        }
        position = reached
        if !hasMore { break }
    }
    return (Double(now() - began) / 1e9, pages, Int(position))
}
let replayPasses = try (0..<5).map { _ in try replayPass() }
let (replaySeconds, pages, changes) = replayPasses.sorted { $0.seconds < $1.seconds }[replayPasses.count / 2]
let replayBaseline = baselineAround()

let samples = latencies.withLock { $0 }
let pacedSamples = pacedLatencies.withLock { $0 }
let sendSamples = sendLatencies.withLock { $0 }
print(
    """

    chatd benchmark (release, loopback, \(database == nil ? "SQLite" : "PostgreSQL"), \(workers) HTTP connections, \(clients) realtime clients)
      baseline GET /v1/health        \(baselines.map { format($0) }.joined(separator: " → ")) req/s   (before the sends and after each measurement)
      POST /v1/messages              \(format(sendRate)) sends/s   = \(format(sendRate / sendBaseline, 3)) × baseline
      the same sends, store alone    \(format(storeSendRate)) sends/s   = \(format(storeSendRate / baselines[0], 3)) × first baseline   (in-process Store.send, no HTTP)
      a send's answer                p50 \(format(sendSamples.percentile(0.5), 2)) ms   p99 \(format(sendSamples.percentile(0.99), 2)) ms
      send → realtime delivery       p50 \(format(samples.percentile(0.5), 2)) ms   p99 \(format(samples.percentile(0.99), 2)) ms   (\(samples.samples.count) of \(totalSends) delivered, \(dropped.load(ordering: .relaxed)) clients dropped as slow)
      the same at half that rate     p50 \(format(pacedSamples.percentile(0.5), 2)) ms   p99 \(format(pacedSamples.percentile(0.99), 2)) ms   (\(pacedSamples.samples.count) of \(pacedSends) delivered; sent on a schedule, timed from when each was due)
      GET a conversation's newest 30 \(format(historyRate)) req/s   = \(format(historyRate / historyBaseline, 3)) × baseline
      GET the conversation list (30) \(format(listRate)) req/s   = \(format(listRate / listBaseline, 3)) × baseline
      changelog replay               \(format(Double(pages) / replaySeconds, 1)) pages/s = \(format(Double(changes) / replaySeconds)) changes/s (\(changes) changes, \(pages) pages of ≤1000)
                                     one page costs \(format((replaySeconds / Double(pages)) * replayBaseline, 1)) baseline GETs   (median of 5 passes; ms a page, in turn: \(replayPasses.map { format($0.seconds * 1000 / Double($0.pages), 2) }.joined(separator: " ")))
      backlog preparation (in-process store)  \(format(Double(backlogSize) / backlogSeconds)) sends/s
    """)
