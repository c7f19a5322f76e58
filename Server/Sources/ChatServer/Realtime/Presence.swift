import Foundation

/// Who is online: users with at least one open realtime socket. Updated by the realtime loop,
/// read by the users endpoints.
public final class Presence: @unchecked Sendable {  // `sockets` is only touched under `lock`
    private let lock = NSLock()
    private var sockets: [String: Int] = [:]

    func connected(_ uid: String) {
        lock.lock()
        sockets[uid, default: 0] += 1
        lock.unlock()
    }

    func disconnected(_ uid: String) {
        lock.lock()
        if let count = sockets[uid] { sockets[uid] = count > 1 ? count - 1 : nil }
        lock.unlock()
    }

    public func isOnline(_ uid: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return sockets[uid] != nil
    }

    /// The uids online now.
    public var online: Set<String> {
        lock.lock()
        defer { lock.unlock() }
        return Set(sockets.keys)
    }
}
