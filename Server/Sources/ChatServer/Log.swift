import Foundation
import OfflineChatLocking

/// chatd's log: lines on standard error (where systemd's journal keeps them). Never a secret,
/// never a token.
enum Log {
    static func write(_ line: String) {
        try? FileHandle.standardError.write(contentsOf: Data("chatd: \(line)\n".utf8))
    }
}

extension Log {
    /// `url` with any user and password in it replaced by `***` (`scheme://***@host…`): what
    /// logs and errors show of a url that may hold credentials.
    static func redacted(_ url: some StringProtocol) -> String {
        guard let scheme = url.range(of: "://"), let at = url.lastIndex(of: "@"), at > scheme.upperBound else {
            return String(url)
        }
        return url[..<scheme.upperBound] + "***" + url[at...]
    }
}

/// Events counted and logged at most once per `interval` seconds: a flood is a line every few
/// seconds, not a full disk.
final class ThrottledLog: Sendable {
    let interval: UInt64
    private let state = Locked((count: 0, lastLine: UInt64(0)))

    init(intervalSeconds: Double = 10) { interval = UInt64(intervalSeconds * 1e9) }

    /// Counts one event; logs `describe(count)` when the interval since the last line is over.
    func note(_ describe: (Int) -> String) {
        let now = DispatchTime.now().uptimeNanoseconds
        let count: Int? = state.withLock { state in
            state.count += 1
            guard state.lastLine == 0 || now - state.lastLine >= interval else { return nil }
            defer { state = (0, now) }
            return state.count
        }
        if let count { Log.write(describe(count)) }
    }
}
