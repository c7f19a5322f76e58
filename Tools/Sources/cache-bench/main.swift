import ChatTesting
import Foundation
// cache-bench: the SDK cache's cached-phase latency against the same query through the raw
// SQLite C API, in the same run, on the same file (issue #4's benchmark; see
// docs/PERFORMANCE.md). Usage:
//   cache-bench [--messages N] [--conversations N] [--queries N] [--encrypted] [--synced]
//   cache-bench --query-only DIR …   (child mode: queries an existing cache, prints peak memory)
import OfflineChatCache
import OfflineChatProtocol
import OfflineChatSQLite

let options = BenchOptions(CommandLine.arguments)
if let directory = options.queryOnly {
    let cache = try ChatCache(directory: directory, uid: "me", key: options.key, clock: { 0 })
    _ = try Bench.sdkQueries(cache, options: options)
    print("peak-rss-kb \(ProcessMemory.peakResidentKilobytes())")
    exit(0)
}

if options.compareEncryption {
    // The same data and queries through a plain and an SQLCipher-keyed cache, in this run.
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("cache-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    print(
        "cache-bench --compare-encryption: \(options.messages) messages in \(options.conversations) conversations, \(options.queries) queries"
    )
    var caches: [ChatCache] = []
    var populate: [Double] = []
    for key in [nil, EncryptionKey(bytes: Array(repeating: 7, count: 32))] {
        let cache = try ChatCache(
            directory: root.appendingPathComponent(key == nil ? "plain" : "encrypted"), uid: "me", key: key,
            clock: { 0 })
        let started = Date()
        try Bench.populate(cache, options: options)
        populate.append(Date().timeIntervalSince(started))
        caches.append(cache)
    }
    // Five alternating rounds of the same queries; the best round of each counts (this
    // machine's noise is larger than the difference being measured).
    var best = [Double.infinity, .infinity]
    for _ in 0..<5 {
        for index in 0..<2 { best[index] = min(best[index], try Bench.sdkQueries(caches[index], options: options)) }
    }
    caches.forEach { $0.close() }
    print(
        String(
            format: "  populate: plain %.2f s, encrypted %.2f s = %.2f ×", populate[0], populate[1],
            populate[1] / populate[0]))
    print(
        String(
            format:
                "  cachedPage(.before(id), limit: 30), best of 5 alternating rounds: plain %.1f µs, encrypted %.1f µs = %.2f × (goal: at most 1.3 ×)",
            best[0] * 1e6, best[1] * 1e6, best[1] / best[0]))
    exit(0)
}

print(
    "cache-bench: \(options.messages) messages in \(options.conversations) conversations, \(options.queries) queries, "
        + "\(options.key == nil ? "plain SQLite" : "SQLCipher \(Connection.cipherVersion ?? "?"), keyed")")
let root = FileManager.default.temporaryDirectory.appendingPathComponent("cache-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: root) }
let directory = root.appendingPathComponent("me")

var started = Date()
let cache = try ChatCache(directory: directory, uid: "me", key: options.key, clock: { 0 })
try Bench.populate(cache, options: options)
let populateSeconds = Date().timeIntervalSince(started)
print(
    options.synced
        ? String(
            format:
                "  populate (ChatCache.applySyncPage, catch-up pages of 1000 changes: synced stretches)   %.0f messages/s",
            Double(options.messages) / populateSeconds)
        : String(
            format: "  populate (ChatCache.storePage, pages of %d)   %.0f messages/s", options.perConversation,
            Double(options.messages) / populateSeconds))

let baseline = try Bench.rawQueries(path: directory.appendingPathComponent("cache.sqlite").path, options: options)
let sdk = try Bench.sdkQueries(cache, options: options)
print(String(format: "  baseline: raw C API, same query and columns   %.1f µs/query", baseline * 1e6))
print(
    String(
        format: "  ChatCache.cachedPage(.before(id), limit: 30)   %.1f µs/query = %.2f × baseline", sdk * 1e6,
        sdk / baseline))

let (listRaw, listSDK) = try Bench.conversationList(cache, directory: directory, options: options)
print(
    String(
        format:
            "  conversation list, first 30 of %d with their last messages: raw C API %.1f µs, ChatCache.cachedConversations %.1f µs = %.2f × baseline (goal: at most 3 ×)",
        options.conversations, listRaw * 1e6, listSDK * 1e6, listSDK / listRaw))
cache.close()

// Peak memory of a process that only opens and queries the cache, at this size and at a
// tenth of it: it must not grow with the cache.
let small = root.appendingPathComponent("small")
var smallOptions = options
smallOptions.messages = options.messages / 10
let smallCache = try ChatCache(directory: small, uid: "me", key: options.key, clock: { 0 })
try Bench.populate(smallCache, options: smallOptions)
smallCache.close()
let bigPeak = try Bench.childPeak(directory: directory, options: options)
let smallPeak = try Bench.childPeak(directory: small, options: smallOptions)
print(
    "  peak RSS of a query-only process: \(smallPeak / 1024) MiB at \(smallOptions.messages) messages, "
        + "\(bigPeak / 1024) MiB at \(options.messages)")
