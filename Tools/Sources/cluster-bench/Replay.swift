import ChatTesting
import Foundation
import OfflineChatProtocol

/// Part 2: a user with a backlog of `backlog` messages (written through node 0) replays their
/// changelog from the start, in pages of 1,000, through node 2, five times over.
struct Replay {
    let cluster: LiveCluster
    let passes = 5

    func run(backlog: Int) async throws -> String {
        let reader = try await cluster.nodes[0].user("reader")
        let writer = try await cluster.nodes[0].user("archive")
        let node = cluster.nodes[0]
        try await concurrently(backlog) { index in
            let request = SendMessageRequest(muid: "b\(index)", receiver: "reader", text: "backlog \(index)")
            let (status, _) = try await node.request("POST", "/v1/messages", token: writer, json: request)
            guard status == 201 else { throw LiveChatd.Failure("a backlog send answered \(status)") }
        }
        var (pages, changes) = (0, 0)
        let started = now()
        for _ in 0..<passes {
            var (cursor, position) = ("c1.0", 0)
            while true {
                let (status, data) = try await cluster.nodes[2].request(
                    "GET", "/v1/changes?cursor=\(cursor)&limit=1000", token: reader)
                guard status == 200 else { throw LiveChatd.Failure("a replay page answered \(status)") }
                // Only the page's tail is read (cursor, hasMore): the figure is chatd's, not the
                // client's; the cursor's position counts the page's changes.
                let tail = String(decoding: data.suffix(512), as: UTF8.self)
                pages += 1
                guard let next = tail.range(of: "\"cursor\":\"", options: .backwards) else {
                    throw LiveChatd.Failure("a page without a cursor")
                }
                cursor = String(tail[next.upperBound...].prefix { $0 != "\"" })
                let reached = Int(cursor.split(separator: ".").last ?? "") ?? position
                changes += reached - position
                position = reached
                if !tail.contains("\"hasMore\":true") { break }
            }
        }
        let seconds = Double(now() - started) / 1e9
        return String(
            format:
                "2. changelog replay through node 2: %.1f pages/s, %.0f changes/s (%d changes in %d pages of ≤ 1,000)",
            Double(pages) / seconds, Double(changes) / seconds, changes, pages)
    }
}
