import Foundation
import OfflineChat

/// `chat open WITH`: the conversation's history (cached first, then the server's), then live
/// messages, typing and read receipts as they come, and an input line: each line typed is
/// sent (queued and marked pending when offline). `/quit` or end of input leaves.
struct ConversationView {
    let session: CLISession
    let with: String
    let group: Bool

    var client: ChatClient { session.client }
    var output: Output { session.output }

    func run() async throws -> Int32 {
        let me = try await session.login()
        output.emit(
            "open", ["with": with],
            human:
                "— \(group ? "group " : "")\(with) — you are \(me.uid); type a message and press enter, /quit to leave")
        let builder = MessagesRequest.MessageRequestBuilder().set(limit: 30)
        if group { builder.set(guid: with) } else { builder.set(uid: with) }
        _ = await session.phases(try builder.build(client: client).previous()) { (message: BaseMessage) in
            (Output.fields(message), Output.line(message))
        }
        for message in client.getPendingMessages() where message.receiverUid == with {
            output.emit("pending", Output.fields(message), human: Output.line(message))
        }
        let conversation = group ? "group_\(with)" : ConversationID.direct(me.uid, with)
        session.events.print { [output] name, fields, line in
            switch name {
            case "message", "message.edited", "message.deleted":
                guard fields["conversation"] as? String == conversation else { return }
                output.emit(name, fields, human: line)
            case "typing":
                // This conversation only: the group's members, or the peer typing to us.
                let inGroup = fields["group"] as? Bool == true
                guard inGroup == group, group ? fields["receiver"] as? String == with : fields["uid"] as? String == with
                else { return }
                output.emit(name, fields, human: line)
            case "connected": output.emit(name, [:], human: "— online")
            case "disconnected":
                output.emit(name, [:], human: "— offline: messages you send are queued and marked (pending)")
            default: return
            }
        }
        for await line in Self.inputLines() {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text == "/quit" { break }
            guard !text.isEmpty else { continue }
            client.startTyping(receiverId: with, receiverType: group ? .group : .user)
            send(text)
        }
        return 0
    }

    private func send(_ text: String) {
        let output = self.output
        client.sendTextMessage(
            message: TextMessage(receiverUid: with, text: text, receiverType: group ? .group : .user),
            onMessagePending: { message in output.emit("pending", Output.fields(message), human: Output.line(message))
            },
            onMessageSent: { message in
                output.emit("sent", Output.fields(message), human: "  ✓ sent: \(Output.line(message))")
            },
            onError: { error in
                if error.errorCode != ChatException.internetUnavailable {
                    output.fail("not sent: \(error.errorDescription)", code: error.errorCode)
                }
            })
    }

    /// Standard input, line by line, read on a thread of its own.
    static func inputLines() -> AsyncStream<String> {
        AsyncStream { continuation in
            Thread.detachNewThread {
                while let line = readLine() { continuation.yield(line) }
                continuation.finish()
            }
        }
    }
}

/// Conversation ids as chatd forms them (the SDK's wire types carry the rule).
enum ConversationID {
    static func direct(_ a: String, _ b: String) -> String { ConversationPayload.directID(a, b) }
}
