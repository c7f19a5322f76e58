// cache-bench: the SDK cache's cached-phase latency against the same query through the raw
// SQLite C API, in the same run, on the same file (issue #4's benchmark; see
// docs/PERFORMANCE.md). Usage:
//   cache-bench [--messages N] [--conversations N] [--queries N] [--encrypted]
//   cache-bench --query-only DIR …   (child mode: queries an existing cache, prints peak memory)
import ChatCache
import ChatProtocol
import Foundation
import SQLiteKit

let options = BenchOptions(CommandLine.arguments)
if let directory = options.queryOnly {
    let cache = try ChatCache(directory: directory, uid: "me", key: options.key, clock: { 0 })
    _ = try Bench.sdkQueries(cache, options: options)
    print("peak-rss-kb \(Bench.peakResidentKilobytes())")
    exit(0)
}

print("cache-bench: \(options.messages) messages in \(options.conversations) conversations, \(options.queries) queries, "
      + "\(options.key == nil ? "plain SQLite" : "SQLCipher \(Connection.cipherVersion ?? "?"), keyed")")
let root = FileManager.default.temporaryDirectory.appendingPathComponent("cache-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: root) }
let directory = root.appendingPathComponent("me")

var started = Date()
let cache = try ChatCache(directory: directory, uid: "me", key: options.key, clock: { 0 })
try Bench.populate(cache, options: options)
let populateSeconds = Date().timeIntervalSince(started)
print(String(format: "  populate (ChatCache.storePage, pages of %d)   %.0f messages/s", options.perConversation,
             Double(options.messages) / populateSeconds))

let baseline = try Bench.rawQueries(path: directory.appendingPathComponent("cache.sqlite").path, options: options)
let sdk = try Bench.sdkQueries(cache, options: options)
print(String(format: "  baseline: raw C API, same query and columns   %.1f µs/query", baseline * 1e6))
print(String(format: "  ChatCache.cachedPage(.before(id), limit: 30)   %.1f µs/query = %.2f × baseline", sdk * 1e6, sdk / baseline))

let (listRaw, listSDK) = try Bench.conversationList(cache, directory: directory, options: options)
print(String(format: "  conversation list, first 30 of %d: raw %.1f µs, ChatCache %.1f µs = %.2f × baseline",
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
print("  peak RSS of a query-only process: \(smallPeak / 1024) MiB at \(smallOptions.messages) messages, "
      + "\(bigPeak / 1024) MiB at \(options.messages)")
