import Foundation
import OfflineChatProtocol

// What chatd's read answers cost to write: a history page of 30 messages (text, some with
// reactions, a reply, metadata) and a conversation list page, each written by
// `CompactJSONEncoder` and, as the same-run baseline, by Foundation's `JSONEncoder`.
//   json-bench [ROUNDS]

let rounds = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 20_000

func message(_ id: Int64) -> MessagePayload {
    MessagePayload(
        id: id, muid: UUID().uuidString, conversationId: "u1~u2", sender: id % 2 == 0 ? "u1" : "u2",
        receiver: id % 2 == 0 ? "u2" : "u1", receiverType: .user, category: .message, type: "text",
        text: "message number \(id): \"quoted\" and a line\nbreak, then some more ordinary text",
        attachment: nil, customData: nil, metadata: id % 5 == 0 ? ["lang": .string("en")] : nil,
        sentAt: 1_800_000_000_000 + id, updatedAt: 1_800_000_000_000 + id, editedAt: nil, deletedAt: nil,
        reactions: id % 3 == 0 ? [ReactionCount(reaction: "👍", count: 2)] : nil,
        parentMessageId: id % 7 == 0 ? id - 1 : nil)
}

let page = (1...30).map { message(Int64($0)) }

/// Nanoseconds per call of `body`, the best of three runs of `rounds` calls.
func nanoseconds(_ body: () throws -> Int) rethrows -> Double {
    var best = Double.infinity
    var sink = 0
    for _ in 0..<3 {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<rounds { sink &+= try body() }
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / Double(rounds))
    }
    if sink == 42 { print("") }  // keeps the work
    return best
}

let compact = CompactJSONEncoder()
let foundation = JSONEncoder()
let baseline = try nanoseconds { try foundation.encode(page).count }
let ours = try nanoseconds { try compact.encode(page).count }
print("history page (30 messages, \(try compact.encode(page).count) bytes):")
print(String(format: "  JSONEncoder         %8.0f ns", baseline))
print(String(format: "  CompactJSONEncoder  %8.0f ns = %.2f x JSONEncoder's time", ours, ours / baseline))

func conversation(_ n: Int64) -> ConversationPayload {
    let peer = UserPayload(
        uid: "user\(n)", name: "User number \(n)", avatar: n % 2 == 0 ? "https://example.com/\(n).png" : nil,
        metadata: n % 4 == 0 ? ["team": .string("blue")] : nil, tags: n % 3 == 0 ? ["vip"] : [],
        lastActiveAt: 1_800_000_000_000 - n)
    return ConversationPayload(
        conversationId: "u0~user\(n)", conversationType: .user, conversationWith: .user(peer),
        lastMessage: message(n), unreadMessageCount: Int(n % 5), lastDeliveredMessageId: n, lastReadMessageId: n - 1,
        peerDeliveredMessageId: n, peerReadMessageId: nil, updatedAt: 1_800_000_000_000 + n)
}

let list = (1...30).map { conversation(Int64($0)) }
let listBaseline = try nanoseconds { try foundation.encode(list).count }
let listOurs = try nanoseconds { try compact.encode(list).count }
print(
    "conversation list page (30 conversations with their peers and last messages, \(try compact.encode(list).count) bytes):"
)
print(String(format: "  JSONEncoder         %8.0f ns", listBaseline))
print(String(format: "  CompactJSONEncoder  %8.0f ns = %.2f x JSONEncoder's time", listOurs, listOurs / listBaseline))
