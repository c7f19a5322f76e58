import ChatTesting
import Foundation
import OfflineChat

/// What the client process measured, sent to the parent as one JSON line.
struct CatchUpReport: Codable {
    var ingested = 0
    var sweeps = 0
    var seconds = 0.0
    var conversationSeconds = 0.0
    var fetchSeconds = 0.0
    var mergeSeconds = 0.0
    var peakKiB = 0
    var beforeKiB = 0
}

/// The client's side of the end-to-end run, in a process of its own, so that its memory is
/// the SDK's and not the backlog writer's: it cold-starts through a `FaultProxy`, goes
/// offline, says `offline` on standard output, waits for `go` on standard input (the parent
/// has written the backlog), catches up sweep by sweep, and prints its `CatchUpReport`.
enum CatchUpClient {
    static func run(server: URL, token: String) async throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sync-bench-client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        let proxy = try FaultProxy(upstreamPort: server.port ?? 0)
        let clock = ManualClock()
        var config = ChatConfig(
            appID: "bench", server: proxy.url, storageDirectory: storage, offline: OfflineConfig(enabled: true),
            callbackQueue: DispatchQueue(label: "bench"), clock: clock,
            logger: StandardErrorLogger(minimumLevel: .error))
        config.requestTimeout = 120
        let bob = try ChatClient(config: config)
        let events = BenchEvents()
        bob.addSyncListener("bench", events)
        bob.addConversationListener("bench", events)
        let connection = ConnectionEvents()
        bob.addConnectionListener("bench", connection)
        _ = try await bob.login(uid: "bob", authToken: token)
        await connection.next("connected")
        await clock.waitForSleepers(1)
        clock.advance(by: config.connectionSettleDelay)
        await events.next("finish")  // the cold start: the sync point is the head

        proxy.mode = .offline
        await connection.next("disconnected")
        say("offline")
        guard readLine() == "go" else { return }

        // The catch-up: peak memory counted from here.
        ProcessMemory.resetPeak()
        var report = CatchUpReport()
        report.beforeKiB = ProcessMemory.peakResidentKilobytes()
        proxy.mode = .pass
        await clock.waitForSleepers(1)
        clock.advance(by: clock.nextDeadline ?? 0)
        await connection.next("connected")
        await clock.waitForSleepers(1)
        let started = Date()
        clock.advance(by: config.connectionSettleDelay)
        while true {
            let (count, outcome) = await events.nextSweep()
            await events.next("finish")  // the sweep is over (the throttle is idle) only then
            report.ingested += count
            report.sweeps += 1
            if outcome == .caughtUp { break }
            clock.advance(by: 15_000)
            try await bob.forceSyncNow()
        }
        report.seconds = Date().timeIntervalSince(started)
        report.peakKiB = ProcessMemory.peakResidentKilobytes()
        report.conversationSeconds = events.conversationSeconds
        report.fetchSeconds = events.fetchSeconds
        report.mergeSeconds = events.mergeSeconds
        bob.logout()
        say(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
    }

    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// The client process as the parent sees it: lines out, lines in.
final class ClientProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = Data()

    init(arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// The next line the client printed (nil at its end).
    func line() -> String? {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[buffered.startIndex..<newline], as: UTF8.self)
                buffered = Data(buffered[(newline + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffered += chunk
        }
    }

    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    func wait() {
        process.waitUntilExit()
    }
}
