/// The JSON body of every 4xx/5xx answer from chatd: `{"code": "...", "message": "..."}`.
public struct APIError: Codable, Sendable, Error, Equatable, CustomStringConvertible {
    /// A stable, machine-readable code; see `ErrorCode`.
    public var code: ErrorCode
    /// A human sentence saying what was wrong and what to do.
    public var message: String

    /// Creates an error with every field.
    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`, for logs.
    public var description: String { "\(code.rawValue): \(message)" }
}

/// Stable error codes chatd answers with. New codes may appear; switch with a default.
public struct ErrorCode: RawRepresentable, Codable, Sendable, Hashable {
    /// The code as it is on the wire, e.g. `not_found`.
    public let rawValue: String
    /// The code spelled `rawValue`, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Decodes the code from a bare JSON string.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    /// Encodes the code as a bare JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// 400: the body is not JSON, or not UTF-8.
    public static let malformedJSON = ErrorCode(rawValue: "malformed_json")
    /// 400: a query parameter is missing or out of range.
    public static let invalidParameter = ErrorCode(rawValue: "invalid_parameter")
    /// 400: the changelog cursor is not one chatd issued.
    public static let invalidCursor = ErrorCode(rawValue: "invalid_cursor")
    /// 401: no, or an unknown, bearer token.
    public static let unauthorized = ErrorCode(rawValue: "unauthorized")
    /// 401: the token's lifetime is over; get a new one.
    public static let tokenExpired = ErrorCode(rawValue: "token_expired")
    /// 401: the token was revoked.
    public static let tokenRevoked = ErrorCode(rawValue: "token_revoked")
    /// 403: authenticated, but not allowed to do this.
    public static let forbidden = ErrorCode(rawValue: "forbidden")
    /// 403: one of the two users has blocked the other; messages and typing between them are refused.
    public static let blocked = ErrorCode(rawValue: "blocked")
    /// 403: the caller's media quota (`chatd --media-quota`) is used up; delete messages with
    /// media, or wait for unsent uploads to expire.
    public static let quotaExceeded = ErrorCode(rawValue: "quota_exceeded")
    /// 403: the caller is banned from the group; an admin must unban them first.
    public static let banned = ErrorCode(rawValue: "banned")
    /// 404: no such resource (or not visible to the caller).
    public static let notFound = ErrorCode(rawValue: "not_found")
    /// 405: the path exists, the method does not.
    public static let methodNotAllowed = ErrorCode(rawValue: "method_not_allowed")
    /// 409: the resource already exists.
    public static let conflict = ErrorCode(rawValue: "conflict")
    /// 410: the changelog cursor is older than the retention window; reset from the conversation list.
    public static let cursorExpired = ErrorCode(rawValue: "cursor_expired")
    /// 413: the request body is larger than chatd accepts.
    public static let payloadTooLarge = ErrorCode(rawValue: "payload_too_large")
    /// 415: a JSON body sent without `Content-Type: application/json`.
    public static let unsupportedMediaType = ErrorCode(rawValue: "unsupported_media_type")
    /// 422: well-formed JSON with a missing field, a wrong type or an invalid value.
    public static let validationFailed = ErrorCode(rawValue: "validation_failed")
    /// 429: too many requests of this kind; the `Retry-After` header says how many seconds to
    /// wait. The request did nothing.
    public static let rateLimited = ErrorCode(rawValue: "rate_limited")
    /// 500: a bug in chatd.
    public static let internalError = ErrorCode(rawValue: "internal_error")
    /// 503: chatd is shutting down.
    public static let unavailable = ErrorCode(rawValue: "unavailable")
}
