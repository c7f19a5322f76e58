import Foundation

/// How the SDK reports what it does. Messages never contain keys or tokens.
public protocol ChatLogger: Sendable {
    /// One line; called from any thread.
    func log(_ level: ChatLogLevel, _ message: String)
}

/// How much a log line matters, least first.
public enum ChatLogLevel: Int, Sendable, Comparable {
    /// Detail for debugging the SDK.
    case debug
    /// What happened, briefly.
    case info
    /// Something went wrong that the SDK handles itself.
    case warning
    /// Something went wrong that the app or its user may notice (a downgrade, data lost).
    case error
    /// Orders levels by importance.
    public static func < (a: ChatLogLevel, b: ChatLogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Logs at or above `minimumLevel` to standard error.
public struct StandardErrorLogger: ChatLogger {
    /// Lines below this level are dropped.
    public var minimumLevel: ChatLogLevel
    /// A logger that writes warnings and errors unless told otherwise.
    public init(minimumLevel: ChatLogLevel = .warning) { self.minimumLevel = minimumLevel }
    /// Writes `[OfflineChat level] message` when `level` is at least `minimumLevel`.
    public func log(_ level: ChatLogLevel, _ message: String) {
        guard level >= minimumLevel else { return }
        FileHandle.standardError.write(Data("[OfflineChat \(level)] \(message)\n".utf8))
    }
}
