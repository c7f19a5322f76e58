import Foundation
import OfflineChatProtocol

/// Input rules shared by the routes. Each failure is a 422 (or 400 for query arguments)
/// with a sentence naming the field.
enum Validate {
    static let uidCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.@")

    static func uid(_ uid: String, field: String = "uid") throws {
        guard (1...100).contains(uid.count), uid.allSatisfy(uidCharacters.contains) else {
            throw HTTPError.validation("`\(field)` must be 1–100 characters of letters, digits, _ - . @")
        }
        // A path segment of its own in every url naming it, where `.` and `..` mean something else.
        guard uid != ".", uid != ".." else { throw HTTPError.validation("`\(field)` must not be . or ..") }
    }

    static func text(_ value: String?, field: String, max: Int, required: Bool = false) throws {
        guard let value else {
            if required { throw HTTPError.validation("`\(field)` is required") }
            return
        }
        if required && value.isEmpty { throw HTTPError.validation("`\(field)` must not be empty") }
        guard value.utf8.count <= max else { throw HTTPError.validation("`\(field)` is longer than \(max) bytes") }
        guard !value.utf8.contains(0) else { throw HTTPError.validation("`\(field)` must not contain NUL characters") }
    }

    /// Free-form JSON may nest at most this deep (Foundation's encoder refuses ~512 levels,
    /// which would make every later read of the value fail).
    static let maxJSONDepth = 32

    static func json(_ value: JSONValue?, field: String) throws {
        func depth(_ value: JSONValue) -> Int {
            switch value {
            case .array(let items): 1 + (items.map(depth).max() ?? 0)
            case .object(let fields): 1 + (fields.values.map(depth).max() ?? 0)
            default: 0
            }
        }
        guard let value else { return }
        guard depth(value) <= maxJSONDepth else {
            throw HTTPError.validation("`\(field)` nests deeper than \(maxJSONDepth) levels")
        }
    }

    static func metadata(_ value: [String: JSONValue]?, field: String = "metadata") throws {
        try json(value.map(JSONValue.object), field: field)
    }

    static let mediaTypes: Set<String> = ["image", "video", "audio", "file"]

    /// An attachment's file name and extension, in bytes: an upload names its file within them
    /// (`POST /v1/media`), so the attachment it answers is one a send accepts.
    static let maxFileNameBytes = 255
    static let maxExtensionBytes = 32

    /// The longest run of `text`'s first characters that fits in `bytes` of UTF-8 (whole
    /// characters: a cut never splits one).
    static func fitting(_ text: String, bytes: Int) -> String {
        var used = 0
        return String(
            text.prefix { character in
                used += character.utf8.count
                return used <= bytes
            })
    }

    static func send(_ request: SendMessageRequest, from sender: String, httpsMedia: Bool = false) throws {
        try text(request.muid, field: "muid", max: 128, required: true)
        try uid(request.receiver, field: "receiver")
        guard request.receiverType == .group || request.receiver != sender else {
            throw HTTPError.validation("you cannot send a message to yourself")
        }
        try filterable(request.type, field: "type", max: 64)
        try text(request.text, field: "text", max: 64 << 10)
        try json(request.customData, field: "customData")
        try metadata(request.metadata)
        // Any message's attachment is stored and shown: a text or custom message's too.
        if let attachment = request.attachment { try self.attachment(attachment, httpsMedia: httpsMedia) }
        switch request.category {
        case .message:
            if request.type == "text" {
                try text(request.text, field: "text", max: 64 << 10, required: true)
            } else if mediaTypes.contains(request.type) {
                guard request.attachment != nil else {
                    throw HTTPError.validation("a \(request.type) message needs an `attachment`")
                }
            } else {
                throw HTTPError.validation("`type` must be text, image, video, audio or file for category message")
            }
        case .custom:
            guard request.customData != nil else { throw HTTPError.validation("a custom message needs `customData`") }
        case .call:
            guard request.type == "audio" || request.type == "video" else {
                throw HTTPError.validation("a call message's `type` must be audio or video")
            }
            guard (request.callStatus ?? .initiated) == .initiated || (request.callStatus?.next.isEmpty ?? false) else {
                throw HTTPError.validation(
                    "a call starts initiated, or is recorded in a final status (ended, missed, …)")
            }
        case .action:
            throw HTTPError.validation("`category` action messages are created by chatd, not sent")
        }
        if request.category != .call && request.callStatus != nil {
            throw HTTPError.validation("`callStatus` is only for category call")
        }
    }

    /// A media url must be chatd's own (`/v1/media/<sha-256>`, from `POST /v1/media`), or
    /// with `httpsMedia` an `https://` url: never `file:`, `javascript:` or an internal
    /// address a client would be made to fetch.
    static func attachment(_ attachment: Attachment, httpsMedia: Bool = false) throws {
        try text(attachment.url, field: "attachment.url", max: 2048, required: true)
        let url = attachment.url
        let own = Endpoints.mediaID(in: url) != nil
        let https = httpsMedia && url.lowercased().hasPrefix("https://") && URL(string: url)?.host?.isEmpty == false
        guard own || https else {
            throw HTTPError.validation(
                "`attachment.url` must be a media url chatd issued (POST \(Endpoints.media))"
                    + (httpsMedia ? " or an https:// url" : ""))
        }
        try text(attachment.name, field: "attachment.name", max: maxFileNameBytes, required: true)
        try text(attachment.mimeType, field: "attachment.mimeType", max: 255, required: true)
        try text(attachment.extension, field: "attachment.extension", max: maxExtensionBytes)
        guard attachment.size >= 0 else { throw HTTPError.validation("`attachment.size` must not be negative") }
    }

    /// `type/subtype` of RFC 9110 token characters, with optional `; parameters` of printable
    /// ASCII, at most 255 bytes: what chatd will send back as the file's `Content-Type`.
    static func isMediaType(_ value: String) -> Bool {
        let parts = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        let essence = parts[0].trimmingCharacters(in: .whitespaces).split(
            separator: "/", omittingEmptySubsequences: false)
        let token = { (part: Substring) in
            !part.isEmpty
                && part.utf8.allSatisfy { byte in
                    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                        || "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
        }
        return value.utf8.count <= 255 && essence.count == 2 && token(essence[0]) && token(essence[1])
            && (parts.count == 1 || parts[1].utf8.allSatisfy { (0x20...0x7E).contains($0) })
    }

    static func group(
        name: String?, icon: String?, description: String?, metadata: [String: JSONValue]?,
        tags: [String]?, password: String?
    ) throws {
        try text(name, field: "name", max: 255, required: name != nil)
        try text(icon, field: "icon", max: 2048)
        try text(description, field: "description", max: 4096)
        try self.metadata(metadata)
        try self.tags(tags)
        try text(password, field: "password", max: 256, required: password != nil)
    }

    static func user(_ request: CreateUserRequest) throws {
        try uid(request.uid)
        try text(request.name, field: "name", max: 255)
        try text(request.avatar, field: "avatar", max: 2048)
        try filterable(request.role, field: "role", max: 64)
        try metadata(request.metadata)
        try tags(request.tags)
    }

    /// A value that list filters name in a comma-separated query argument (`Routes.list`:
    /// `?tags=`, `?roles=`, `?types=`): `text`'s rules, not empty and without a comma, or no
    /// filter could ever name it.
    static func filterable(_ value: String?, field: String, max: Int) throws {
        guard let value else { return }
        try text(value, field: field, max: max, required: true)
        guard !value.contains(",") else {
            throw HTTPError.validation("`\(field)` must not contain `,` (filters separate values with commas)")
        }
    }

    /// A user's or a group's tags: at most 50, each one `filterable`.
    static func tags(_ tags: [String]?) throws {
        guard (tags ?? []).count <= 50 else { throw HTTPError.validation("`tags` holds at most 50 tags") }
        for tag in tags ?? [] { try filterable(tag, field: "tags", max: 64) }
    }
}
