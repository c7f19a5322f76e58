import Foundation
import OfflineChatLocking

/// Who is online: users with at least one open realtime socket, on this node or (with a bus)
/// on another live one. Updated by the realtime loop, read by the users endpoints.
public final class Presence: Sendable {
    private let state = Locked(State())

    private struct State {
        var sockets: [String: Int] = [:]
        /// Users whose count here changed since the last `takeChanged()`.
        var changed: Set<String> = []
        /// Users online on the other live nodes, as last read (`Store.syncPresence`).
        var elsewhere: Set<String> = []
    }

    func connected(_ uid: String) {
        state.withLock {
            $0.sockets[uid, default: 0] += 1
            $0.changed.insert(uid)
        }
    }

    func disconnected(_ uid: String) {
        state.withLock {
            if let count = $0.sockets[uid] { $0.sockets[uid] = count > 1 ? count - 1 : nil }
            $0.changed.insert(uid)
        }
    }

    /// The counts here of the users whose count changed (0: none left), to write for the
    /// other nodes.
    func takeChanged() -> [String: Int] {
        state.withLock { state in
            let counts = Dictionary(uniqueKeysWithValues: state.changed.map { ($0, state.sockets[$0] ?? 0) })
            state.changed = []
            return counts
        }
    }

    /// A write that failed: its counts go again next time.
    func restore(_ counts: [String: Int]) { state.withLock { $0.changed.formUnion(counts.keys) } }

    func setElsewhere(_ uids: Set<String>) { state.withLock { $0.elsewhere = uids } }

    public func isOnline(_ uid: String) -> Bool {
        state.withLock { $0.sockets[uid] != nil || $0.elsewhere.contains(uid) }
    }

    /// The uids online now.
    public var online: Set<String> { state.withLock { Set($0.sockets.keys).union($0.elsewhere) } }

    /// Users with a socket on this node.
    var here: Int { state.withLock { $0.sockets.count } }
}
