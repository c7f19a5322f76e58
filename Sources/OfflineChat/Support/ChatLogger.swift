import Foundation

/// How the SDK reports what it does. Messages never contain keys or tokens.
public protocol ChatLogger: Sendable {
    func log(_ level: ChatLogLevel, _ message: String)
}

public enum ChatLogLevel: Int, Sendable, Comparable {
    case debug, info, warning, error
    public static func < (a: ChatLogLevel, b: ChatLogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Logs at or above `minimumLevel` to standard error.
public struct StandardErrorLogger: ChatLogger {
    public var minimumLevel: ChatLogLevel
    public init(minimumLevel: ChatLogLevel = .warning) { self.minimumLevel = minimumLevel }
    public func log(_ level: ChatLogLevel, _ message: String) {
        guard level >= minimumLevel else { return }
        FileHandle.standardError.write(Data("[OfflineChat \(level)] \(message)\n".utf8))
    }
}
