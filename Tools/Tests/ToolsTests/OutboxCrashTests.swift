import ChatTesting
import Foundation
import OfflineChat
import OfflineChatServerProcess
import Testing

/// Kill -9 at random points between queueing and acknowledgement: after a restart the server
/// holds every queued message exactly once, in composed order per conversation, and nothing
/// that reached the outbox is lost. The client is `outbox-crash-probe`, a separate process.
@Suite(.timeLimit(.minutes(10))) struct OutboxCrashTests {
    static let messages = 16

    @Test func killingTheClientAnywhereLosesNothingAndDuplicatesNothing() async throws {
        // No write limit: alice sends about 800 messages within seconds, and a throttled flush
        // (correctly) leaves messages queued when `sendPendingMessages` returns.
        let server = try LiveChatd(arguments: ["--write-rate", "0"])
        let token = try await server.user("alice")
        let iterations = Int(ProcessInfo.processInfo.environment["CRASH_ITERATIONS"] ?? "") ?? 50
        var killedMidway = 0
        for iteration in 0..<iterations {
            let peers = ["b\(iteration)", "c\(iteration)"]
            for peer in peers { _ = try await server.user(peer) }
            let storage = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: storage) }
            // `ready`, then a `pending` and a `sent` line per message, then `done`: kill after a random one.
            let killAfter = Int.random(in: 1...(2 * Self.messages + 1))
            let first = await Probe.run(
                ["compose", server.url.absoluteString, storage.path, token, "t\(iteration)", "\(Self.messages)"]
                    + peers,
                killAfterLines: killAfter)
            #expect(!first.lines.contains { $0.hasPrefix("failed") || $0.hasPrefix("error") }, "\(first.lines)")
            if first.killed && !first.lines.contains("done") { killedMidway += 1 }
            let committed = Set(first.lines.compactMap { Probe.number(after: "pending ", in: $0) })

            let second = await Probe.run(
                ["resume", server.url.absoluteString, storage.path, token], killAfterLines: nil)
            #expect(
                second.lines == ["left 0"],
                "iteration \(iteration): the restarted client flushed everything: \(second.lines)")

            var delivered: [Int] = []
            for peer in peers {
                let (status, data) = try await server.request(
                    "GET", "\(Endpoints.conversations)/alice~\(peer)/messages?limit=100", token: token)
                if status == 404 { continue }  // nothing reached this peer
                let seqs = try JSONDecoder().decode([MessagePayload].self, from: data).compactMap { message in
                    message.text.flatMap { Probe.number(after: "t\(iteration):", in: $0) }
                }
                #expect(seqs == seqs.sorted(), "iteration \(iteration): composed order towards \(peer): \(seqs)")
                #expect(seqs.allSatisfy { $0 % peers.count == peers.firstIndex(of: peer)! })
                delivered += seqs
            }
            #expect(
                delivered.count == Set(delivered).count,
                "iteration \(iteration) (killed after line \(killAfter)): duplicates \(delivered.sorted())")
            #expect(
                committed.isSubset(of: Set(delivered)),
                "iteration \(iteration): lost \(committed.subtracting(delivered).sorted())")
        }
        #expect(
            killedMidway >= iterations / 2,
            "most kills land before the flush finished (\(killedMidway) of \(iterations))")
    }
}

/// One run of `outbox-crash-probe`, read line by line on a thread of its own; SIGKILL after
/// `killAfterLines` lines (and then `delayMicroseconds` more: the fault's random timing).
/// Everything the process wrote before it died is returned.
enum Probe {
    struct Result: Sendable {
        var lines: [String]
        var killed: Bool
        /// When each line was read (uptime nanoseconds).
        var times: [UInt64] = []
    }

    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "outbox-crash-probe")
    }

    static func run(_ arguments: [String], killAfterLines: Int?, delayMicroseconds: UInt32 = 0) async -> Result {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    returning: runBlocking(arguments, killAfterLines: killAfterLines, delay: delayMicroseconds))
            }
        }
    }

    private static func runBlocking(_ arguments: [String], killAfterLines: Int?, delay: UInt32) -> Result {
        let process = Process()
        let output = Pipe()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = output
        do { try process.run() } catch {
            return Result(lines: ["error cannot start \(binary.path): \(error)"], killed: false)
        }
        var result = Result(lines: [], killed: false)
        var buffer = Data()
        let exited = DispatchSemaphore(value: 0)
        let killerDone = DispatchSemaphore(value: 0)
        var killerStarted = false
        while true {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer += chunk
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                result.lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                buffer = Data(buffer[buffer.index(after: newline)...])
                result.times.append(DispatchTime.now().uptimeNanoseconds)
                if !result.killed, let killAfterLines, result.lines.count == killAfterLines {
                    if delay > 0 {
                        // Unless the process ends first (then nothing is killed).
                        let pid = process.processIdentifier
                        Thread.detachNewThread {
                            if exited.wait(timeout: .now() + .microseconds(Int(delay))) == .timedOut {
                                kill(pid, SIGKILL)
                            }
                            killerDone.signal()
                        }
                        killerStarted = true
                    } else {
                        kill(process.processIdentifier, SIGKILL)
                    }
                    result.killed = true
                }
            }
        }
        exited.signal()
        if killerStarted { killerDone.wait() }
        ServerProcess.waitForExit(process)
        return result
    }

    static func number(after prefix: String, in line: String) -> Int? {
        line.hasPrefix(prefix) ? Int(line.dropFirst(prefix.count)) : nil
    }
}
