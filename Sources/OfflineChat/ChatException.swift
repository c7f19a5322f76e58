import Foundation

/// Every error the SDK reports: a stable `errorCode` and a sentence saying what happened.
/// Server errors keep chatd's code (for example `forbidden`, `banned`, `not_found`).
public struct ChatException: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code: one of the constants below for errors raised on the device, or chatd's
    /// own code (`not_found`, `cursor_expired`, …) for an answer the server refused.
    public let errorCode: String
    /// What went wrong, for people (logs, support); not for matching.
    public let errorDescription: String
    /// The HTTP status for server errors, nil for errors raised on the device.
    public let httpStatus: Int?
    /// Seconds the server asked to wait before trying again (`Retry-After` on a 429
    /// `rate_limited` or a 503): the outbox waits that long before resending, without counting
    /// an attempt.
    public let retryAfter: TimeInterval?

    /// An error with `errorCode` (apps rarely need to make one; tests of code that handles them do).
    public init(errorCode: String, errorDescription: String, httpStatus: Int? = nil, retryAfter: TimeInterval? = nil) {
        self.errorCode = errorCode
        self.errorDescription = errorDescription
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
    }

    public var description: String { "\(errorCode): \(errorDescription)" }

    /// No answer from the server (offline, unreachable, timed out). For a read: the cached
    /// phase already fired. For a send: the message is queued, not failed.
    public static let internetUnavailable = "ERROR_INTERNET_UNAVAILABLE"
    /// The server was reached but its connection could not be secured: its certificate is not
    /// trusted (self-signed, expired, another host's; `ChatConfig.trustedCertificates` adds
    /// trust), or the TLS handshake failed. A setup error more often than a network one (a
    /// captive portal also causes it): sends retry it a few times, then fail with it.
    public static let secureConnectionFailed = "ERROR_SECURE_CONNECTION_FAILED"
    /// The platform refused a plain `http://` server (App Transport Security on Apple
    /// platforms): use `https://`, or allow the host in the app's Info.plist. Never retried.
    public static let insecureConnectionRefused = "ERROR_INSECURE_CONNECTION_REFUSED"
    /// A second fetch on a request object while its first is in flight.
    public static let requestInProgress = "ERROR_REQUEST_IN_PROGRESS"
    /// The call needs a logged-in user (or a logout or another login came first).
    public static let userNotLoggedIn = "ERROR_USER_NOT_LOGGED_IN"
    /// The call needs offline support, which is off (`OfflineConfig.enabled`) or has no cache
    /// for this session.
    public static let offlineDisabled = "ERROR_OFFLINE_DISABLED"
    /// `forceSyncNow` while a sync runs.
    public static let syncInProgress = "ERROR_OFFLINE_SYNC_IN_PROGRESS"
    /// `forceSyncNow` too soon after the last sync; the description names the milliseconds left.
    public static let syncCooldown = "ERROR_OFFLINE_SYNC_COOLDOWN"
    /// A queued message was dropped before it was sent: a cache reset, a conversation removal,
    /// `clearOfflineCache()` or logout (`MessageFailureReason.discarded`).
    public static let messageDiscarded = "ERROR_OFFLINE_MESSAGE_DISCARDED"
    /// A media send's file could not be copied into the cache (or read back for its upload).
    public static let offlineMediaCopyFailed = "ERROR_OFFLINE_MEDIA_COPY_FAILED"
    /// A media send's file is larger than the cache's whole byte budget (`maxStorageSize`).
    public static let offlineMediaTooLarge = "ERROR_OFFLINE_MEDIA_TOO_LARGE"
    /// A download was larger than its attachment says, or than `ChatConfig.maxMediaDownloadSize`.
    public static let mediaTooLarge = "ERROR_MEDIA_TOO_LARGE"
    /// `maxPendingMessages` are already queued: the new send is refused (nothing old is dropped).
    public static let outboxFull = "ERROR_OFFLINE_OUTBOX_FULL"
    /// The token expired or was revoked: the user is logged out and their cache wiped.
    public static let authTokenInvalid = "ERROR_AUTH_TOKEN_INVALID"
    /// The request was invalid before it reached the server.
    public static let invalidArgument = "ERROR_INVALID_ARGUMENT"
    /// The server answered something the SDK could not read.
    public static let unexpectedResponse = "ERROR_UNEXPECTED_RESPONSE"
    /// The cache failed (disk full, damaged file); the read or write changed nothing.
    public static let cacheFailure = "ERROR_CACHE_FAILURE"
    /// The server failed (HTTP 5xx) with an answer that is not chatd's (a proxy's error page, say);
    /// a retry may work.
    public static let serverError = "server_error"

    /// `errorCode`, typed: compare it with chatd's codes (`ErrorCode.forbidden`, …).
    public var code: ErrorCode { ErrorCode(rawValue: errorCode) }

    /// An error with a typed code (how the SDK makes them).
    init(_ code: ErrorCode, _ description: String, httpStatus: Int? = nil, retryAfter: TimeInterval? = nil) {
        self.init(
            errorCode: code.rawValue, errorDescription: description, httpStatus: httpStatus, retryAfter: retryAfter)
    }

    static func offline(_ detail: String) -> ChatException {
        ChatException(.internetUnavailable, "the server cannot be reached (\(detail))")
    }

    static func notLoggedIn() -> ChatException {
        ChatException(.userNotLoggedIn, "log in first")
    }

    static func invalid(_ detail: String) -> ChatException {
        ChatException(.invalidArgument, detail)
    }
}

/// The codes of errors raised on the device, typed: match them as chatd's are,
/// `catch let error as ChatException where error.code == .internetUnavailable`. Their raw
/// values are the `ChatException` constants (`errorCode`).
extension ErrorCode {
    /// ``ChatException/internetUnavailable``, typed.
    public static let internetUnavailable = ErrorCode(rawValue: ChatException.internetUnavailable)
    /// ``ChatException/requestInProgress``, typed.
    public static let requestInProgress = ErrorCode(rawValue: ChatException.requestInProgress)
    /// ``ChatException/secureConnectionFailed``, typed.
    public static let secureConnectionFailed = ErrorCode(rawValue: ChatException.secureConnectionFailed)
    /// ``ChatException/insecureConnectionRefused``, typed.
    public static let insecureConnectionRefused = ErrorCode(rawValue: ChatException.insecureConnectionRefused)
    /// ``ChatException/userNotLoggedIn``, typed.
    public static let userNotLoggedIn = ErrorCode(rawValue: ChatException.userNotLoggedIn)
    /// ``ChatException/offlineDisabled``, typed.
    public static let offlineDisabled = ErrorCode(rawValue: ChatException.offlineDisabled)
    /// ``ChatException/syncInProgress``, typed.
    public static let syncInProgress = ErrorCode(rawValue: ChatException.syncInProgress)
    /// ``ChatException/syncCooldown``, typed.
    public static let syncCooldown = ErrorCode(rawValue: ChatException.syncCooldown)
    /// ``ChatException/messageDiscarded``, typed.
    public static let messageDiscarded = ErrorCode(rawValue: ChatException.messageDiscarded)
    /// ``ChatException/offlineMediaCopyFailed``, typed.
    public static let offlineMediaCopyFailed = ErrorCode(rawValue: ChatException.offlineMediaCopyFailed)
    /// ``ChatException/offlineMediaTooLarge``, typed.
    public static let offlineMediaTooLarge = ErrorCode(rawValue: ChatException.offlineMediaTooLarge)
    /// ``ChatException/mediaTooLarge``, typed.
    public static let mediaTooLarge = ErrorCode(rawValue: ChatException.mediaTooLarge)
    /// ``ChatException/outboxFull``, typed.
    public static let outboxFull = ErrorCode(rawValue: ChatException.outboxFull)
    /// ``ChatException/authTokenInvalid``, typed.
    public static let authTokenInvalid = ErrorCode(rawValue: ChatException.authTokenInvalid)
    /// ``ChatException/invalidArgument``, typed.
    public static let invalidArgument = ErrorCode(rawValue: ChatException.invalidArgument)
    /// ``ChatException/unexpectedResponse``, typed.
    public static let unexpectedResponse = ErrorCode(rawValue: ChatException.unexpectedResponse)
    /// ``ChatException/cacheFailure``, typed.
    public static let cacheFailure = ErrorCode(rawValue: ChatException.cacheFailure)
    /// ``ChatException/serverError``, typed.
    public static let serverError = ErrorCode(rawValue: ChatException.serverError)
}
