/// Whom a message is for.
public enum ReceiverType: String, Codable, Sendable {
    case user
    case group
}

/// A message's family. `type` says more within it (text, image, a custom type, …).
public enum MessageCategory: String, Codable, Sendable {
    case message
    case custom
    case action
    case call
}

/// The state of a call message (category `call`, type `audio` or `video`). Calls start
/// `initiated`; `ongoing` once answered; `ended`, `missed`, `rejected`, `cancelled` and
/// `busy` are final.
public enum CallStatus: String, Codable, Sendable, CaseIterable {
    case initiated, ongoing, ended, missed, rejected, cancelled, busy

    /// The statuses a call may move to from this one.
    public var next: Set<CallStatus> {
        switch self {
        case .initiated: [.ongoing, .missed, .rejected, .cancelled, .busy]
        case .ongoing: [.ended]
        case .ended, .missed, .rejected, .cancelled, .busy: []
        }
    }
}

/// Metadata of a media message's file. chatd stores metadata only; bytes live at `url`.
public struct Attachment: Codable, Sendable, Equatable {
    public var url: String
    public var name: String
    public var size: Int64
    public var mimeType: String
    public var `extension`: String

    public init(url: String, name: String, size: Int64, mimeType: String, extension: String) {
        self.url = url
        self.name = name
        self.size = size
        self.mimeType = mimeType
        self.extension = `extension`
    }
}

/// `POST /v1/messages` body. Idempotent on (`sender`, `muid`).
public struct SendMessageRequest: Codable, Sendable {
    /// The client's unique message id; a retry with the same muid returns the original message.
    public var muid: String
    public var receiver: String
    public var receiverType: ReceiverType
    public var category: MessageCategory
    /// "text"; "image", "video", "audio", "file" for media; any custom type for `.custom`.
    public var type: String
    public var text: String?
    public var attachment: Attachment?
    public var customData: JSONValue?
    public var metadata: [String: JSONValue]?
    /// Makes the message a thread reply to this message (in the same conversation).
    public var parentMessageId: Int64?
    /// For category `call`: the status the call starts in (default `initiated`).
    public var callStatus: CallStatus?

    public init(
        muid: String, receiver: String, receiverType: ReceiverType = .user,
        category: MessageCategory = .message, type: String = "text", text: String? = nil,
        attachment: Attachment? = nil, customData: JSONValue? = nil, metadata: [String: JSONValue]? = nil,
        parentMessageId: Int64? = nil, callStatus: CallStatus? = nil
    ) {
        self.parentMessageId = parentMessageId
        self.callStatus = callStatus
        self.muid = muid
        self.receiver = receiver
        self.receiverType = receiverType
        self.category = category
        self.type = type
        self.text = text
        self.attachment = attachment
        self.customData = customData
        self.metadata = metadata
    }
}

/// `PATCH /v1/messages/{id}` body: the fields to replace.
public struct EditMessageRequest: Codable, Sendable {
    public var text: String?
    public var customData: JSONValue?
    public var metadata: [String: JSONValue]?
    /// Call messages only; either participant may move the call along `CallStatus.next`.
    public var callStatus: CallStatus?
    public init(
        text: String? = nil, customData: JSONValue? = nil, metadata: [String: JSONValue]? = nil,
        callStatus: CallStatus? = nil
    ) {
        self.text = text
        self.customData = customData
        self.metadata = metadata
        self.callStatus = callStatus
    }
}

/// A message as chatd stores and returns it. Times are epoch milliseconds.
public struct MessagePayload: Codable, Sendable, Equatable {
    public var id: Int64
    public var muid: String?
    public var conversationId: String
    public var sender: String
    public var receiver: String
    public var receiverType: ReceiverType
    public var category: MessageCategory
    public var type: String
    public var text: String?
    public var attachment: Attachment?
    public var customData: JSONValue?
    public var metadata: [String: JSONValue]?
    public var sentAt: Int64
    /// Last change of any kind (edit, deletion).
    public var updatedAt: Int64
    public var editedAt: Int64?
    /// Set when the message was deleted; text, attachment and data are then cleared.
    public var deletedAt: Int64?
    /// How many users reacted with each reaction (absent when none), ordered by reaction.
    public var reactions: [ReactionCount]?
    /// Set on thread replies: the message they reply to.
    public var parentMessageId: Int64?
    /// On a thread's parent: its replies that are not deleted (absent when none).
    public var replyCount: Int?
    /// For call messages: where the call stands.
    public var callStatus: CallStatus?
    /// For group action messages (category `action`, type `groupMember`): the membership change.
    public var action: MemberActionPayload?

    public init(
        id: Int64, muid: String?, conversationId: String, sender: String, receiver: String,
        receiverType: ReceiverType, category: MessageCategory, type: String, text: String?,
        attachment: Attachment?, customData: JSONValue?, metadata: [String: JSONValue]?,
        sentAt: Int64, updatedAt: Int64, editedAt: Int64?, deletedAt: Int64?, reactions: [ReactionCount]? = nil,
        parentMessageId: Int64? = nil, replyCount: Int? = nil, callStatus: CallStatus? = nil,
        action: MemberActionPayload? = nil
    ) {
        self.action = action
        self.parentMessageId = parentMessageId
        self.replyCount = replyCount
        self.callStatus = callStatus
        self.id = id
        self.muid = muid
        self.conversationId = conversationId
        self.sender = sender
        self.receiver = receiver
        self.receiverType = receiverType
        self.category = category
        self.type = type
        self.text = text
        self.attachment = attachment
        self.customData = customData
        self.metadata = metadata
        self.sentAt = sentAt
        self.updatedAt = updatedAt
        self.editedAt = editedAt
        self.deletedAt = deletedAt
        self.reactions = reactions
    }
}

/// `POST /v1/conversations/{id}/delivered` and `/read` body: everything up to `messageId`.
public struct ReceiptRequest: Codable, Sendable {
    public var messageId: Int64
    public init(messageId: Int64) { self.messageId = messageId }
}

/// Who has received or read a conversation up to which message.
public struct ReceiptPayload: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable { case delivered, read }
    public var kind: Kind
    public var conversationId: String
    /// The user who received or read.
    public var uid: String
    public var messageId: Int64
    public var at: Int64
    public init(kind: Kind, conversationId: String, uid: String, messageId: Int64, at: Int64) {
        self.kind = kind
        self.conversationId = conversationId
        self.uid = uid
        self.messageId = messageId
        self.at = at
    }
}
