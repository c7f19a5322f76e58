import Foundation

/// Who is online: users with at least one open realtime socket, on this node or (with a bus)
/// on another live one. Updated by the realtime loop, read by the users endpoints.
public final class Presence: @unchecked Sendable {  // every field is only touched under `lock`
    private let lock = NSLock()
    private var sockets: [String: Int] = [:]
    /// Users whose count here changed since the last `takeChanged()`.
    private var changed: Set<String> = []
    /// Users online on the other live nodes, as last read (`Store.syncPresence`).
    private var elsewhere: Set<String> = []

    func connected(_ uid: String) {
        lock.lock()
        sockets[uid, default: 0] += 1
        changed.insert(uid)
        lock.unlock()
    }

    func disconnected(_ uid: String) {
        lock.lock()
        if let count = sockets[uid] { sockets[uid] = count > 1 ? count - 1 : nil }
        changed.insert(uid)
        lock.unlock()
    }

    /// The counts here of the users whose count changed (0: none left), to write for the
    /// other nodes.
    func takeChanged() -> [String: Int] {
        lock.lock()
        defer { lock.unlock() }
        let counts = Dictionary(uniqueKeysWithValues: changed.map { ($0, sockets[$0] ?? 0) })
        changed = []
        return counts
    }

    /// A write that failed: its counts go again next time.
    func restore(_ counts: [String: Int]) {
        lock.lock()
        changed.formUnion(counts.keys)
        lock.unlock()
    }

    func setElsewhere(_ uids: Set<String>) {
        lock.lock()
        elsewhere = uids
        lock.unlock()
    }

    public func isOnline(_ uid: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return sockets[uid] != nil || elsewhere.contains(uid)
    }

    /// The uids online now.
    public var online: Set<String> {
        lock.lock()
        defer { lock.unlock() }
        return Set(sockets.keys).union(elsewhere)
    }

    /// Users with a socket on this node.
    var here: Int {
        lock.lock()
        defer { lock.unlock() }
        return sockets.count
    }
}
