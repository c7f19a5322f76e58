import Foundation
import OfflineChat

/// Lines for people, or JSON lines (`--json`) for scripts: one object per line with an
/// `event` and its fields.
struct Output: Sendable {
    let json: Bool

    func emit(_ event: String, _ fields: [String: Any] = [:], human: @autoclosure () -> String) {
        if json {
            var object = fields
            object["event"] = event
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            write(String(decoding: data, as: UTF8.self))
        } else {
            write(human())
        }
    }

    /// A problem: on standard error for people, as an `error` event for scripts.
    func fail(_ message: String, code: String? = nil) {
        if json {
            emit("error", ["message": message, "code": code ?? "error"], human: message)
        } else {
            FileHandle.standardError.write(Data("chat: \(message)\n".utf8))
        }
    }

    func write(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func fields(_ message: BaseMessage) -> [String: Any] {
        var fields: [String: Any] = [
            "id": message.id, "sender": message.senderUid, "conversation": message.conversationId,
            "sentAt": message.sentAt, "type": message.type, "source": message.source.rawValue
        ]
        if let text = (message as? TextMessage)?.text { fields["text"] = text }
        if let local = message.localMessageId { fields["localId"] = local }
        if message.deletedAt != nil { fields["deleted"] = true }
        if message.editedAt != nil { fields["edited"] = true }
        return fields
    }

    static func line(_ message: BaseMessage) -> String {
        let time = Date(timeIntervalSince1970: Double(message.sentAt) / 1000)
        let clock = ISO8601DateFormatter.string(
            from: time, timeZone: .current, formatOptions: [.withTime, .withColonSeparatorInTime])
        let body: String
        if message.deletedAt != nil {
            body = "(deleted)"
        } else if let text = (message as? TextMessage)?.text {
            body = text + (message.editedAt != nil ? " (edited)" : "")
        } else if let action = message as? ActionMessage {
            body = "* \(action.message)"
        } else {
            body = "[\(message.type)]"
        }
        let status = message.id == 0 ? " (pending)" : ""
        return "\(clock) \(message.senderUid): \(body)\(status)"
    }
}
