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

#if canImport(os)
import os

/// Logs at or above `minimumLevel` to the unified system log (Console, `log stream
/// --predicate 'subsystem == "OfflineChat"'`): where a device's logs can be read. The default
/// logger on Apple platforms. The SDK's lines carry no keys, tokens or message texts, so they
/// are logged public.
public struct SystemLogger: ChatLogger {
    /// Lines below this level are dropped.
    public var minimumLevel: ChatLogLevel
    private let logger: Logger

    /// A logger for `subsystem` (`OfflineChat` unless given), category `sdk`.
    public init(subsystem: String = "OfflineChat", minimumLevel: ChatLogLevel = .info) {
        self.minimumLevel = minimumLevel
        logger = Logger(subsystem: subsystem, category: "sdk")
    }

    /// Logs `message` at the system log's matching level.
    public func log(_ level: ChatLogLevel, _ message: String) {
        guard level >= minimumLevel else { return }
        switch level {
        case .debug: logger.debug("\(message, privacy: .public)")
        case .info: logger.info("\(message, privacy: .public)")
        case .warning: logger.warning("\(message, privacy: .public)")
        case .error: logger.error("\(message, privacy: .public)")
        }
    }
}
#endif

extension ChatConfig {
    /// The platform's logger: the system log on Apple platforms (`SystemLogger`, where a
    /// device's logs can be read), standard error elsewhere (`StandardErrorLogger`).
    public static var defaultLogger: any ChatLogger {
        #if canImport(os)
        SystemLogger()
        #else
        StandardErrorLogger()
        #endif
    }
}
