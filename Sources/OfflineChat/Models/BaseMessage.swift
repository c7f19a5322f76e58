import Foundation

/// Where a message object came from.
public enum MessageSource: String, Sendable {
    /// Pushed over the realtime connection.
    case realtime
    /// Found by the catch-up sync.
    case sync
    /// The server phase of a read, or a send's acknowledgement.
    case server
    /// The cached phase of a read.
    case cache
    /// Composed on this device and not yet acknowledged.
    case local
}

/// A message's delivery state as the sender sees it.
public enum MessageStatus: String, Sendable {
    case pending, sending, sent, delivered, read, failed
}

/// Why a queued message failed.
public enum MessageFailureReason: String, Sendable {
    /// Dropped by a cache reset, a conversation removal, `clearOfflineCache()` or logout.
    case discarded
    /// The server refused it (not a member, blocked, invalid); retrying will not help.
    case permanent
    /// A network or server failure that a retry may fix.
    case transient
}

/// A message of any kind. Read `category` / `type`, or cast to `TextMessage`, `MediaMessage`,
/// `CustomMessage`, `ActionMessage` or `Call`.
///
/// Messages are reference types, as in the seed's API. The SDK copies what it needs when you
/// hand one over and never mutates an object after delivering it to you, so treat received
/// messages as values (hence `@unchecked Sendable`).
public class BaseMessage: @unchecked Sendable, CustomStringConvertible {
    /// chatd's id; 0 until the server accepted the message.
    public var id: Int64 = 0
    /// The client's unique id, the server's dedupe key for retries.
    public var muid: String
    /// The outbox's id for a message composed on this device.
    public var localMessageId: Int64?
    public var senderUid: String = ""
    /// The sender's profile when the cache knows it.
    public var sender: User?
    public var receiverUid: String
    public var receiverType: ReceiverType
    public var category: MessageCategory
    /// `text`, `image`, `video`, `audio`, `file`, a custom type, `groupMember`, `audio`/`video` calls.
    public var type: String
    public var conversationId: String = ""
    /// Epoch milliseconds (server time once sent).
    public var sentAt: Int64 = 0
    public var updatedAt: Int64 = 0
    public var editedAt: Int64?
    public var deletedAt: Int64?
    public var parentMessageId: Int64?
    public var replyCount = 0
    public var metadata: [String: JSONValue]?
    public var reactions: [ReactionCount] = []
    public var source = MessageSource.local
    public var messageStatus = MessageStatus.pending
    var failureReason: MessageFailureReason?
    /// The error behind a failed send.
    public var failureError: ChatException?

    init(muid: String, receiverUid: String, receiverType: ReceiverType, category: MessageCategory, type: String) {
        self.muid = muid
        self.receiverUid = receiverUid
        self.receiverType = receiverType
        self.category = category
        self.type = type
    }

    public func getFailureReason() -> MessageFailureReason? { failureReason }

    public var description: String {
        "\(Swift.type(of: self))(id: \(id), \(senderUid) → \(receiverUid), \(category.rawValue)/\(type))"
    }

    /// The right subclass for a stored or received message.
    static func make(_ payload: MessagePayload, source: MessageSource) -> BaseMessage {
        let message: BaseMessage
        // The payload's muid (a fresh one only for messages that have none, such as actions):
        // making a UUID reads the system's random source, too slow for a sync's thousand.
        let muid = payload.muid ?? MUID.make()
        switch payload.category {
        case .message where payload.type == "text":
            message = TextMessage(
                muid: muid, receiverUid: payload.receiver, text: payload.text ?? "", receiverType: payload.receiverType)
        case .message:
            let media = MediaMessage(
                muid: muid, receiverUid: payload.receiver, fileurl: "", messageType: payload.type,
                receiverType: payload.receiverType)
            media.attachment = payload.attachment
            media.caption = payload.text
            message = media
        case .custom:
            message = CustomMessage(
                muid: muid, receiverUid: payload.receiver, receiverType: payload.receiverType,
                customData: payload.customData ?? .null, type: payload.type)
        case .action:
            let action = ActionMessage(
                muid: muid, receiverUid: payload.receiver, receiverType: payload.receiverType, type: payload.type)
            action.action = payload.action
            action.message = payload.text ?? ""
            message = action
        case .call:
            message = Call(
                muid: muid, receiverId: payload.receiver, callType: payload.type, receiverType: payload.receiverType)
            (message as! Call).callStatus = payload.callStatus ?? .initiated
        }
        message.fill(from: payload)
        message.source = source
        return message
    }

    func fill(from payload: MessagePayload) {
        id = payload.id
        senderUid = payload.sender
        conversationId = payload.conversationId
        sentAt = payload.sentAt
        updatedAt = payload.updatedAt
        editedAt = payload.editedAt
        deletedAt = payload.deletedAt
        parentMessageId = payload.parentMessageId
        replyCount = payload.replyCount ?? 0
        metadata = payload.metadata
        reactions = payload.reactions ?? []
        messageStatus = .sent
    }

    /// The wire and cache shape (id 0 while pending).
    var payload: MessagePayload {
        var payload = MessagePayload(
            id: id, muid: muid, conversationId: conversationId, sender: senderUid, receiver: receiverUid,
            receiverType: receiverType, category: category, type: type, text: nil, attachment: nil,
            customData: nil, metadata: metadata, sentAt: sentAt, updatedAt: updatedAt, editedAt: editedAt,
            deletedAt: deletedAt, reactions: reactions.isEmpty ? nil : reactions,
            parentMessageId: parentMessageId, replyCount: replyCount == 0 ? nil : replyCount)
        addContent(to: &payload)
        return payload
    }

    /// Subclasses put their content into the payload.
    func addContent(to payload: inout MessagePayload) {}
}

/// A text message.
public final class TextMessage: BaseMessage, @unchecked Sendable {
    public var text: String

    public convenience init(receiverUid: String, text: String, receiverType: ReceiverType) {
        self.init(muid: MUID.make(), receiverUid: receiverUid, text: text, receiverType: receiverType)
    }

    init(muid: String, receiverUid: String, text: String, receiverType: ReceiverType) {
        self.text = text
        super.init(muid: muid, receiverUid: receiverUid, receiverType: receiverType, category: .message, type: "text")
    }

    override func addContent(to payload: inout MessagePayload) { payload.text = text }
}

/// An image, video, audio or file message. Compose it with a local file (`fileurl`); once
/// sent, `attachment` describes the uploaded file and `localPath` is where a downloaded or
/// queued copy lives on this device.
public final class MediaMessage: BaseMessage, @unchecked Sendable {
    /// The local file to send (as composed).
    public var fileurl: String
    public var attachment: Attachment?
    public var caption: String?
    public var localPath: String?

    public convenience init(receiverUid: String, fileurl: String, messageType: String, receiverType: ReceiverType) {
        self.init(
            muid: MUID.make(), receiverUid: receiverUid, fileurl: fileurl, messageType: messageType,
            receiverType: receiverType)
    }

    init(muid: String, receiverUid: String, fileurl: String, messageType: String, receiverType: ReceiverType) {
        self.fileurl = fileurl
        super.init(
            muid: muid, receiverUid: receiverUid, receiverType: receiverType, category: .message, type: messageType)
    }

    override func addContent(to payload: inout MessagePayload) {
        payload.attachment = attachment
        payload.text = caption
    }
}

/// A message with an app-defined `type` and JSON `customData`.
public final class CustomMessage: BaseMessage, @unchecked Sendable {
    public var customData: JSONValue

    public convenience init(receiverUid: String, receiverType: ReceiverType, customData: JSONValue, type: String) {
        self.init(
            muid: MUID.make(), receiverUid: receiverUid, receiverType: receiverType, customData: customData, type: type)
    }

    init(muid: String, receiverUid: String, receiverType: ReceiverType, customData: JSONValue, type: String) {
        self.customData = customData
        super.init(muid: muid, receiverUid: receiverUid, receiverType: receiverType, category: .custom, type: type)
    }

    override func addContent(to payload: inout MessagePayload) { payload.customData = customData }
}

/// A group membership change, written by the server (joined, left, added, kicked, banned,
/// unbanned, scope changed, ownership transferred).
public final class ActionMessage: BaseMessage, @unchecked Sendable {
    public var action: MemberActionPayload?
    /// A readable sentence, e.g. "alice kicked bob".
    public var message = ""
    public var actionBy: String? { action?.actor }
    public var actionOn: String? { action?.target }
    public var oldScope: GroupScope? { action?.oldScope }
    public var newScope: GroupScope? { action?.newScope }

    init(muid: String, receiverUid: String, receiverType: ReceiverType, type: String) {
        super.init(muid: muid, receiverUid: receiverUid, receiverType: receiverType, category: .action, type: type)
    }

    override func addContent(to payload: inout MessagePayload) {
        payload.action = action
        payload.text = message
    }
}

/// A call record (no media transport): `type` is `audio` or `video`.
public final class Call: BaseMessage, @unchecked Sendable {
    public var callStatus = CallStatus.initiated

    public convenience init(receiverId: String, callType: String, receiverType: ReceiverType) {
        self.init(muid: MUID.make(), receiverId: receiverId, callType: callType, receiverType: receiverType)
    }

    init(muid: String, receiverId: String, callType: String, receiverType: ReceiverType) {
        super.init(muid: muid, receiverUid: receiverId, receiverType: receiverType, category: .call, type: callType)
    }

    override func addContent(to payload: inout MessagePayload) { payload.callStatus = callStatus }
}

/// Client-side unique message ids.
enum MUID {
    static func make() -> String { UUID().uuidString.lowercased() }
}
