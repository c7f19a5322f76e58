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
    /// Queued on this device (the outbox), waiting for a connection or its turn.
    case pending
    /// On its way to the server now.
    case sending
    /// Stored by the server.
    case sent
    /// The receiver's device has it.
    case delivered
    /// The receiver read it.
    case read
    /// The outbox gave up on it (`getFailureReason()`).
    case failed
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
    /// Who sent it (the logged-in user for a message composed here).
    public var senderUid: String = ""
    /// The sender's profile when the cache knows it.
    public var sender: User?
    /// The receiving user's uid, or the group's guid.
    public var receiverUid: String
    /// `.user` or `.group`.
    public var receiverType: ReceiverType
    /// `message`, `custom`, `action` (written by the server) or `call`.
    public var category: MessageCategory
    /// `text`, `image`, `video`, `audio`, `file`, a custom type, `groupMember`, `audio`/`video` calls.
    public var type: String
    /// The conversation it belongs to (set by the server).
    public var conversationId: String = ""
    /// Epoch milliseconds (server time once sent).
    public var sentAt: Int64 = 0
    /// When it last changed (an edit, a deletion, a reaction, a reply): epoch milliseconds.
    public var updatedAt: Int64 = 0
    /// When it was last edited, if it was.
    public var editedAt: Int64?
    /// When it was deleted, if it was (a deleted message keeps its id and loses its content).
    public var deletedAt: Int64?
    /// The message this one replies to, in a thread.
    public var parentMessageId: Int64?
    /// Replies in its thread.
    public var replyCount = 0
    /// The sender's own data, carried as it is.
    public var metadata: [String: JSONValue]?
    /// Reaction counts, one per reaction.
    public var reactions: [ReactionCount] = []
    /// Where this object came from.
    public var source = MessageSource.local
    /// Its delivery state as the sender sees it.
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

    /// Why the outbox gave up on it; nil unless `messageStatus` is `.failed`.
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
    /// What it says.
    public var text: String

    /// A new message to `receiverUid` (a user's uid or a group's guid, by `receiverType`), with
    /// a fresh `muid`; send it with `sendTextMessage`.
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
    /// The uploaded file (url, name, size, MIME type) once sent.
    public var attachment: Attachment?
    /// Text sent with the file.
    public var caption: String?
    /// A copy on this device (downloaded, or kept while queued).
    public var localPath: String?

    /// A new media message with the local file at `fileurl`; `messageType` is `image`, `video`,
    /// `audio` or `file`. Send it with `sendMediaMessage`.
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
    /// The app's data, carried as it is.
    public var customData: JSONValue

    /// A new custom message of the app's `type`; send it with `sendCustomMessage`.
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
    /// What happened, as the server recorded it.
    public var action: MemberActionPayload?
    /// A readable sentence, e.g. "alice kicked bob".
    public var message = ""
    /// Who did it.
    public var actionBy: String? { action?.actor }
    /// To whom.
    public var actionOn: String? { action?.target }
    /// The member's scope before a scope change.
    public var oldScope: GroupScope? { action?.oldScope }
    /// And after.
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
    /// Where the call stands (initiated, ongoing, ended, …).
    public var callStatus = CallStatus.initiated

    /// A new call record to `receiverId`; `callType` is `audio` or `video`.
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
