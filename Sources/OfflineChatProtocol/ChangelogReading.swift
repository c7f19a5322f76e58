import Foundation

/// A type read straight from JSON bytes with `JSONReader` (the SDK's HTTP client prefers it
/// to `Decodable`).
public protocol JSONReadable {
    /// Reads the value from `data`, one whole JSON text; throws when it is invalid or lacks a required member.
    init(json data: Data) throws
}

/// Changelog pages read with `JSONReader` instead of `JSONDecoder`: a catch-up sync reads a
/// page of up to 1,000 changes per sweep, and asking `JSONDecoder` for each of a message's
/// many optional fields cost several times the parse (`docs/PERFORMANCE.md`). The result is
/// the same value `JSONDecoder` makes (a test compares them on every kind of change); the
/// rarer nested shapes still go through their `Decodable` conformance.
extension ChangelogPage: JSONReadable {
    /// Reads a `GET /v1/changes` answer body.
    public init(json data: Data) throws {
        var reader = JSONReader(data)
        var changes: [ChangePayload] = []
        var hasMore: Bool?
        var cursor: String?
        var serverTime: Int64?
        try reader.object { key, reader in
            switch key {
            case "changes":
                changes.reserveCapacity(ChangelogPage.maxLimit)
                try reader.array { reader in changes.append(try ChangePayload(reading: &reader)) }
            case "hasMore": hasMore = try reader.bool()
            case "cursor": cursor = try reader.string()
            case "serverTime": serverTime = try reader.int64()
            default: try reader.skip()
            }
        }
        try reader.end()
        self.init(
            changes: changes, hasMore: try required(hasMore, "hasMore"), cursor: try required(cursor, "cursor"),
            serverTime: try required(serverTime, "serverTime"))
    }
}

extension ChangePayload {
    /// Reads one change object at the reader's position, as its `Decodable` conformance would.
    public init(reading reader: inout JSONReader) throws {
        var seq: Int64?
        var kind: ChangeKind?
        var conversationId: String?
        var at: Int64?
        var message: MessagePayload?
        var receipt: ReceiptPayload?
        var block: BlockPayload?
        var reaction: ReactionPayload?
        var notification: FeedItemPayload?
        var group: GroupPayload?
        let decoder = JSONReading.decoder
        try reader.object { key, reader in
            switch key {
            case "seq": seq = try reader.int64()
            case "kind":
                let raw = try reader.string()
                guard let known = ChangeKind(rawValue: raw) else {
                    throw JSONReading.failure("an unknown change kind \(raw)")
                }
                kind = known
            case "conversationId": conversationId = try reader.string()
            case "at": at = try reader.int64()
            case "message": message = try reader.optional { try MessagePayload(reading: &$0) }
            case "receipt": receipt = try reader.optional { try $0.decode(ReceiptPayload.self, using: decoder) }
            case "block": block = try reader.optional { try $0.decode(BlockPayload.self, using: decoder) }
            case "reaction": reaction = try reader.optional { try $0.decode(ReactionPayload.self, using: decoder) }
            case "notification":
                notification = try reader.optional { try $0.decode(FeedItemPayload.self, using: decoder) }
            case "group": group = try reader.optional { try $0.decode(GroupPayload.self, using: decoder) }
            default: try reader.skip()
            }
        }
        self.init(
            seq: try required(seq, "seq"), kind: try required(kind, "kind"),
            conversationId: try required(conversationId, "conversationId"),
            message: message, receipt: receipt, block: block, reaction: reaction, notification: notification,
            group: group,
            at: try required(at, "at"))
    }
}

extension MessagePayload {
    /// Reads one message object at the reader's position, as its `Decodable` conformance would.
    public init(reading reader: inout JSONReader) throws {
        var id: Int64?
        var conversationId: String?
        var sender: String?
        var receiver: String?
        var receiverType: ReceiverType?
        var category: MessageCategory?
        var type: String?
        var sentAt: Int64?
        var updatedAt: Int64?
        var message = MessagePayload(
            id: 0, muid: nil, conversationId: "", sender: "", receiver: "", receiverType: .user, category: .message,
            type: "", text: nil, attachment: nil, customData: nil, metadata: nil, sentAt: 0, updatedAt: 0,
            editedAt: nil, deletedAt: nil)
        let decoder = JSONReading.decoder
        try reader.object { key, reader in
            switch key {
            case "id": id = try reader.int64()
            case "muid": message.muid = try reader.optional { try $0.string() }
            case "conversationId": conversationId = try reader.string()
            case "sender": sender = try reader.string()
            case "receiver": receiver = try reader.string()
            case "receiverType": receiverType = try JSONReading.enumeration(try reader.string())
            case "category": category = try JSONReading.enumeration(try reader.string())
            case "type": type = try reader.string()
            case "text": message.text = try reader.optional { try $0.string() }
            case "attachment":
                message.attachment = try reader.optional { try $0.decode(Attachment.self, using: decoder) }
            case "customData": message.customData = try reader.optional { try $0.value() }
            case "metadata":
                switch try reader.value() {
                case .null: message.metadata = nil
                case .object(let members): message.metadata = members
                default: throw JSONReading.failure("metadata is not an object")
                }
            case "sentAt": sentAt = try reader.int64()
            case "updatedAt": updatedAt = try reader.int64()
            case "editedAt": message.editedAt = try reader.optional { try $0.int64() }
            case "deletedAt": message.deletedAt = try reader.optional { try $0.int64() }
            case "reactions":
                message.reactions = try reader.optional { try $0.decode([ReactionCount].self, using: decoder) }
            case "parentMessageId": message.parentMessageId = try reader.optional { try $0.int64() }
            case "replyCount": message.replyCount = try reader.optional { Int(try $0.int64()) }
            case "callStatus": message.callStatus = try reader.optional { try JSONReading.enumeration(try $0.string()) }
            case "action":
                message.action = try reader.optional { try $0.decode(MemberActionPayload.self, using: decoder) }
            default: try reader.skip()
            }
        }
        message.id = try required(id, "id")
        message.conversationId = try required(conversationId, "conversationId")
        message.sender = try required(sender, "sender")
        message.receiver = try required(receiver, "receiver")
        message.receiverType = try required(receiverType, "receiverType")
        message.category = try required(category, "category")
        message.type = try required(type, "type")
        message.sentAt = try required(sentAt, "sentAt")
        message.updatedAt = try required(updatedAt, "updatedAt")
        self = message
    }
}

/// Shared by the readers above.
enum JSONReading {
    static let decoder = JSONDecoder()

    static func failure(_ reason: String) -> JSONReader.Failure {
        JSONReader.Failure(offset: -1, reason: reason)
    }

    static func enumeration<T: RawRepresentable>(_ raw: String) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: raw) else { throw failure("\(raw) is not a \(T.self)") }
        return value
    }
}

/// A member every value of the type has.
private func required<T>(_ value: T?, _ key: String) throws -> T {
    guard let value else { throw JSONReading.failure("\(key) is missing") }
    return value
}
