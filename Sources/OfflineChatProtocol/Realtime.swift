import Foundation

/// One text frame on the realtime WebSocket (`GET /v1/realtime`), in either direction.
///
/// Server → client: `hello` once (with the head cursor), then `change` events in position
/// order, and `typing` from peers. Client → server: `typing`.
public struct RealtimeEnvelope: Codable, Sendable, Equatable {
    /// What a frame carries.
    public enum Kind: String, Codable, Sendable {
        /// The server's first frame: the caller's `uid` and the head `cursor`.
        case hello
        /// A change, with the cursor right after it (none on a socket opened with
        /// `cursorFrames=true`: its `cursor` frames carry it).
        case change
        /// The cursor after every change sent before it, on a socket opened with
        /// `cursorFrames=true`: sent after a change at most about once a second (coalesced), so
        /// a change to a group is the same bytes for each of its members.
        case cursor
        /// A typing indicator, from a client or relayed to its peers.
        case typing
    }

    /// What the frame carries; it says which fields below are set.
    public var type: Kind
    /// `hello`: the caller's uid.
    public var uid: String?
    /// `hello`: the changelog cursor at connect time; changes after it arrive on this socket.
    /// `change`: the cursor right after this change (a changelog read from it starts with the
    /// next one). `cursor`: the cursor after every change before this frame.
    public var cursor: String?
    /// `change`.
    public var change: ChangePayload?
    /// `typing`.
    public var typing: TypingPayload?

    /// Creates an envelope with every field.
    public init(
        type: Kind, uid: String? = nil, cursor: String? = nil, change: ChangePayload? = nil,
        typing: TypingPayload? = nil
    ) {
        self.type = type
        self.uid = uid
        self.cursor = cursor
        self.change = change
        self.typing = typing
    }
}

/// A typing indicator. Client → server: `receiver` and `isTyping`; the server fills `sender`.
public struct TypingPayload: Codable, Sendable, Equatable {
    /// The typing user's uid; set by the server, ignored from clients.
    public var sender: String?
    /// The uid of the user, or the guid of the group, being typed to.
    public var receiver: String
    /// Whether `receiver` is a user or a group.
    public var receiverType: ReceiverType
    /// Whether `sender` is typing now (false: stopped).
    public var isTyping: Bool
    /// Creates an indicator with every field.
    public init(sender: String? = nil, receiver: String, receiverType: ReceiverType = .user, isTyping: Bool) {
        self.sender = sender
        self.receiver = receiver
        self.receiverType = receiverType
        self.isTyping = isTyping
    }

    /// `receiverType` may be left out; it defaults to `user`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sender = try container.decodeIfPresent(String.self, forKey: .sender)
        receiver = try container.decode(String.self, forKey: .receiver)
        receiverType = try container.decodeIfPresent(ReceiverType.self, forKey: .receiverType) ?? .user
        isTyping = try container.decode(Bool.self, forKey: .isTyping)
    }
}

/// What a client may send on the realtime socket: a typing indicator (`{"type":"typing",
/// "typing":{…}}`), nothing else. The server reads client frames as this type only, with
/// `JSONReader` (linear, at most `maxDepth` levels), so no frame can make it decode changes or
/// descend into deep nesting. Unknown keys are skipped.
public struct RealtimeClientFrame: Sendable, Equatable {
    /// The frame's kind; the server takes only `typing` (anything else closes with 1003).
    public var type: String
    /// The indicator, for `typing` frames.
    public var typing: TypingPayload?

    /// The deepest nesting a client frame may have.
    public static let maxDepth = 4

    /// Reads a client frame; throws when it is not a JSON object with a `type`, or nests too deep.
    public init(json data: Data) throws {
        var reader = JSONReader(data, maxDepth: Self.maxDepth)
        var type: String?
        var typing: TypingPayload?
        try reader.object { key, reader in
            switch key {
            case "type": type = try reader.string()
            case "typing": typing = try reader.optional { try TypingPayload(reading: &$0) }
            default: try reader.skip()
            }
        }
        try reader.end()
        guard let type else { throw JSONReader.Failure(offset: 0, reason: "a frame needs a type") }
        self.type = type
        self.typing = typing
    }
}

extension TypingPayload {
    /// `sender` is ignored: the server sets it.
    init(reading reader: inout JSONReader) throws {
        var receiver: String?
        var receiverType = ReceiverType.user
        var isTyping: Bool?
        try reader.object { key, reader in
            switch key {
            case "receiver": receiver = try reader.string()
            case "receiverType":
                let raw = try reader.string()
                guard let known = ReceiverType(rawValue: raw) else {
                    throw JSONReader.Failure(offset: 0, reason: "receiverType \(raw)")
                }
                receiverType = known
            case "isTyping": isTyping = try reader.bool()
            default: try reader.skip()
            }
        }
        guard let receiver, let isTyping else {
            throw JSONReader.Failure(offset: 0, reason: "typing needs a receiver and isTyping")
        }
        self.init(receiver: receiver, receiverType: receiverType, isTyping: isTyping)
    }
}
