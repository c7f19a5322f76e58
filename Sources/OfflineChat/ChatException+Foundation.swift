import Foundation

/// `ChatException` as a Foundation error: `error.localizedDescription` is its
/// `errorDescription` (on Linux too), and bridged to `NSError` it carries its code and, for the
/// common codes, a recovery suggestion.
///
/// Not a `LocalizedError`: that protocol's `errorDescription` is a `String?` with a default of
/// nil, and beside `ChatException`'s own `errorDescription` (a `String`, the name the API
/// keeps) the compiler picks the protocol's wherever an optional is expected, so
/// `error?.errorDescription` would silently read nil. The `NSError`'s integer `code` means
/// nothing for the same reason (`errorCode` is a `String`): match on ``ChatException/code``,
/// or the `"errorCode"` key of `userInfo`.
extension ChatException: CustomNSError {
    /// The domain of every bridged `ChatException`.
    public static var errorDomain: String { "dev.offlinechat.ChatException" }

    /// `NSLocalizedDescriptionKey`: ``errorDescription``; `"errorCode"`: ``errorCode``;
    /// `NSLocalizedRecoverySuggestionErrorKey` when there is something to suggest.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: errorDescription, "errorCode": errorCode]
        if let httpStatus { info["httpStatus"] = httpStatus }
        if let recoverySuggestion { info[NSLocalizedRecoverySuggestionErrorKey] = recoverySuggestion }
        return info
    }

    /// What the app (or its developer) can do about the errors that have a remedy.
    public var recoverySuggestion: String? {
        switch code {
        case .internetUnavailable:
            "Check the connection; messages sent meanwhile are queued and go out when it returns."
        case .secureConnectionFailed:
            "The server's certificate is not trusted: fix it, or trust it with ChatConfig.trustedCertificates."
        case .insecureConnectionRefused:
            "Use an https:// server, or allow the host in the app's Info.plist (App Transport Security)."
        case .authTokenInvalid, .unauthorized:
            "Sign in again with a new token."
        case .outboxFull:
            "Wait for queued messages to be sent, or raise OfflineConfig.maxPendingMessages."
        case .syncCooldown:
            "Try again in a moment."
        default:
            nil
        }
    }
}
