/// Whom a message is for.
public enum ReceiverType: String, Codable, Sendable {
    /// A user: `receiver` is a uid.
    case user
    /// A group: `receiver` is the group's guid.
    case group
}

/// A message's family. `type` says more within it (text, image, a custom type, …).
public enum MessageCategory: String, Codable, Sendable {
    /// A text or media message (`type` text, image, video, audio or file).
    case message
    /// A custom message: any `type`, with `customData`.
    case custom
    /// A group's action message, written by chatd (clients cannot send one).
    case action
    /// A call record (`type` audio or video, with `callStatus`).
    case call
}

/// The state of a call message (category `call`, type `audio` or `video`). Calls start
/// `initiated`; `ongoing` once answered; `ended`, `missed`, `rejected`, `cancelled` and
/// `busy` are final.
public enum CallStatus: String, Codable, Sendable, CaseIterable {
    /// `initiated`: started; `ongoing`: answered; `ended`, `missed`, `rejected`, `cancelled` and `busy`: final.
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

/// Metadata of a file a message carries (a media message's, or any other message's). chatd
/// stores metadata only; bytes live at `url`.
public struct Attachment: Codable, Sendable, Equatable {
    /// Where the bytes are: chatd's `/v1/media/<id>` path, or an `https://` url if chatd allows them.
    public var url: String
    /// The file's name.
    public var name: String
    /// The file's size in bytes.
    public var size: Int64
    /// The file's media type, e.g. `image/jpeg`.
    public var mimeType: String
    /// The file name's extension, without the dot (may be empty).
    public var `extension`: String

    /// Creates an attachment with every field.
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
    /// The uid of the user, or the guid of the group, the message is for.
    public var receiver: String
    /// Whether `receiver` is a user or a group.
    public var receiverType: ReceiverType
    /// The message's family.
    public var category: MessageCategory
    /// "text"; "image", "video", "audio", "file" for media; any custom type for `.custom`.
    public var type: String
    /// The text; required for `text` messages.
    public var text: String?
    /// The file (from `POST /v1/media`); required for media messages.
    public var attachment: Attachment?
    /// Free-form JSON; required for `.custom` messages.
    public var customData: JSONValue?
    /// Free-form JSON kept with the message.
    public var metadata: [String: JSONValue]?
    /// Makes the message a thread reply to this message (in the same conversation).
    public var parentMessageId: Int64?
    /// For category `call`: the status the call starts in (default `initiated`).
    public var callStatus: CallStatus?

    /// Creates a request with every field; by default a text message to a user.
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
    /// The new text; nil keeps it (a message without text cannot get one).
    public var text: String?
    /// New custom data; nil keeps the old.
    public var customData: JSONValue?
    /// New metadata, replacing the old whole; nil keeps the old.
    public var metadata: [String: JSONValue]?
    /// Call messages only; either participant may move the call along `CallStatus.next`.
    public var callStatus: CallStatus?
    /// Creates a request; the fields left nil stay as they are.
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
    /// chatd's id; ids increase, so they order messages.
    public var id: Int64
    /// The sender's `muid`; nil on group action messages.
    public var muid: String?
    /// The conversation the message is in.
    public var conversationId: String
    /// The sender's uid (for a group action message, the actor's).
    public var sender: String
    /// The uid of the receiving user, or the group's guid.
    public var receiver: String
    /// Whether `receiver` is a user or a group.
    public var receiverType: ReceiverType
    /// The message's family.
    public var category: MessageCategory
    /// Its kind within `category`: text or a media type, a custom type, audio or video for calls, `groupMember`.
    public var type: String
    /// The text, if any.
    public var text: String?
    /// The file of a media message.
    public var attachment: Attachment?
    /// The sender's free-form JSON.
    public var customData: JSONValue?
    /// The sender's free-form JSON metadata.
    public var metadata: [String: JSONValue]?
    /// Epoch milliseconds at which chatd stored the message.
    public var sentAt: Int64
    /// Last change of any kind (edit, deletion).
    public var updatedAt: Int64
    /// Epoch milliseconds of the last edit of text, custom data or metadata; nil if never edited.
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

    /// Creates a message with every field.
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
    /// The newest message received or read; the receipt covers it and all before.
    public var messageId: Int64
    /// Creates a request for `messageId`.
    public init(messageId: Int64) { self.messageId = messageId }
}

/// Who has received or read a conversation up to which message.
public struct ReceiptPayload: Codable, Sendable, Equatable {
    /// Which receipt.
    public enum Kind: String, Codable, Sendable {
        /// The user's device received the messages.
        case delivered
        /// The user read the messages.
        case read
    }
    /// Whether the user received or read.
    public var kind: Kind
    /// The conversation the receipt is in.
    public var conversationId: String
    /// The user who received or read.
    public var uid: String
    /// The newest message the receipt covers.
    public var messageId: Int64
    /// Epoch milliseconds of the receipt.
    public var at: Int64
    /// Creates a receipt with every field.
    public init(kind: Kind, conversationId: String, uid: String, messageId: Int64, at: Int64) {
        self.kind = kind
        self.conversationId = conversationId
        self.uid = uid
        self.messageId = messageId
        self.at = at
    }
}
