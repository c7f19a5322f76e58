import ChatTesting
import Foundation
import OfflineChat
// sync-bench: issue #6's benchmark against a real chatd (see docs/PERFORMANCE.md). A client
// cold-starts, goes offline (a FaultProxy takes the network away) while peers send it a
// backlog, comes back and syncs until caught up (one page of 1,000 changes per sweep; the
// 15 s cooldown between forced sweeps passes on a ManualClock). Reported: changes ingested
// per second over the sweeps, against a raw SQLite bulk insert of the same rows in the same
// run, and the client process's peak memory during the catch-up (the client runs in a
// process of its own; this one writes the backlog).
// Usage: sync-bench [--changes N] [--peers N] [--ingest-only]   ($CHATD_BINARY names chatd)
import OfflineChatCache
import OfflineChatProtocol
import OfflineChatSQLite

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil }
        ?? value
}
if let index = arguments.firstIndex(of: "--client"), arguments.count > index + 2,
    let url = URL(string: arguments[index + 1])
{
    try await CatchUpClient.run(server: url, token: arguments[index + 2])
    exit(0)
}
let changes = option("--changes", default: 100_000)
let peers = option("--peers", default: 10)

let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sync-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: storage) }
let bench = Ingest(storage: storage, peers: peers)

// 1. Ingest alone: the same 100 pages merged by ChatCache.applySyncPage, in process, into a
//    plain cache and into an SQLCipher-encrypted one.
let ingest = try bench.ingestOnly(count: changes, key: nil)
let ingestRaw = try bench.rawBulkInsert(count: changes, name: "raw-ingest")
print(
    String(
        format: "sync-bench: ingest of %d changes (100 pages) by ChatCache.applySyncPage: %.2f s = %.0f changes/s",
        changes, ingest,
        Double(changes) / ingest))
print(
    String(
        format:
            "  baseline: raw bulk insert of the same rows: %.2f s = %.0f rows/s; the merge runs at %.2f of raw speed (goal: at least 0.33)",
        ingestRaw, Double(changes) / ingestRaw, ingestRaw / ingest))
if Connection.cipherAvailable {
    let encrypted = try bench.ingestOnly(count: changes, key: EncryptionKey(bytes: Array(repeating: 7, count: 32)))
    print(
        String(
            format: "  the same into an encrypted cache (SQLCipher %@): %.2f s = %.2f × plain (goal: at most 1.3 ×)",
            Connection.cipherVersion ?? "?", encrypted, encrypted / ingest))
}
let (storeLive, follow) = try bench.liveFollowing(count: 10_000)
print(
    String(
        format:
            "  live: storing a realtime message %.0f µs; moving the sync point along with it %.0f µs more (%.0f %%)",
        storeLive, follow, 100 * follow / storeLive))
let decoding = try bench.decodePage()
print(
    String(
        format:
            "  decoding one changelog page of 1,000 changes (%d bytes): JSONDecoder %.1f ms, the SDK's JSONReader %.1f ms (%.1f ×)",
        decoding.bytes, decoding.decoder, decoding.reader, decoding.decoder / decoding.reader))
if arguments.contains("--ingest-only") { exit(0) }

// 2. End to end, through the SDK (in a client process) and a live chatd.
// measures throughput, not the limits
let server = try LiveChatd(arguments: ["--write-rate", "0", "--upload-rate", "0"])
let client = try ClientProcess(arguments: ["--client", server.url.absoluteString, try await server.user("bob")])
guard client.line() == "offline" else { throw LiveChatd.Failure("the client did not get to its offline state") }
print(
    "sync-bench end to end: \(changes) messages from \(peers) peers, chatd \(server.url), SQLCipher \(Connection.cipherVersion ?? "absent")"
)
let generated = Date()
try await withThrowingTaskGroup(of: Void.self) { group in
    for peer in 0..<peers {
        group.addTask {
            let token = try await server.user("peer\(peer)")
            for index in stride(from: peer, to: changes, by: peers) {
                let (status, _) = try await server.request(
                    "POST", Endpoints.messages, token: token,
                    json: SendMessageRequest(muid: "m\(index)", receiver: "bob", text: "backlog message \(index)"))
                guard status == 201 else { throw LiveChatd.Failure("send \(index): \(status)") }
            }
        }
    }
    try await group.waitForAll()
}
print(String(format: "  backlog written in %.1f s", Date().timeIntervalSince(generated)))
client.send("go")
guard let line = client.line(), let report = try? JSONDecoder().decode(CatchUpReport.self, from: Data(line.utf8)) else {
    throw LiveChatd.Failure("the client reported nothing")
}
client.wait()
let raw = try bench.rawBulkInsert(count: report.ingested, name: "raw")
let seconds = report.seconds
print(
    String(
        format: "  catch-up: %d changes in %d sweeps, %.2f s = %.0f changes/s", report.ingested, report.sweeps, seconds,
        Double(report.ingested) / seconds))
print(
    String(
        format:
            "  baseline: raw bulk insert of %d message rows (SQLiteKit, 1,000 per transaction) %.2f s = %.0f rows/s",
        report.ingested, raw, Double(report.ingested) / raw))
print(
    String(
        format: "  of which refreshing the conversation list (one page per sweep): %.2f s", report.conversationSeconds))
print(String(format: "  of which fetching and decoding the changelog pages: %.2f s", report.fetchSeconds))
print(
    String(
        format: "  of which merging the pages into the cache (and the callbacks): %.2f s = %.0f changes/s",
        report.mergeSeconds,
        Double(report.ingested) / report.mergeSeconds))
print(
    String(
        format:
            "  ingest (the merge) at %.2f of raw speed (goal: at least 0.33); end to end, fetching included, %.2f (goal: at least 0.25)",
        raw / report.mergeSeconds, raw / seconds))
print(
    "  the client's peak RSS during the catch-up: \(report.peakKiB / 1024) MiB (before it: \(report.beforeKiB / 1024) MiB; goal: under 64 MiB)"
)
server.stop()
