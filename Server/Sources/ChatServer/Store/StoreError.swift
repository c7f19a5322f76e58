import OfflineChatProtocol

/// What the store refuses, in the domain's words: the code clients see and why. The store
/// knows nothing of HTTP; the edge gives each code its status once (`HTTPError.init(_:)`).
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    static func validation(_ message: String) -> StoreError { StoreError(.validationFailed, message) }
    static func notFound(_ message: String) -> StoreError { StoreError(.notFound, message) }
    static func forbidden(_ message: String) -> StoreError { StoreError(.forbidden, message) }
    static func conflict(_ message: String) -> StoreError { StoreError(.conflict, message) }
    static func badParameter(_ message: String) -> StoreError { StoreError(.invalidParameter, message) }
    static func broken(_ message: String) -> StoreError { StoreError(.internalError, message) }
    /// The database cannot be reached (a cut connection, a failover): try again later.
    static func unavailable(_ message: String) -> StoreError { StoreError(.unavailable, message) }
}
