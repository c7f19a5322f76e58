import Foundation
import OfflineChatCache
import OfflineChatLocking

/// Listeners of one kind, held weakly and registered by ID: adding with an ID that is taken
/// replaces the old listener, removing an ID removes whatever is there. Callbacks run on the
/// configured callback queue.
final class ListenerRegistry<Listener>: Sendable {
    /// One listener, as the closure `add` was given: it holds the listener weakly and hands it
    /// back as the protocol it was registered as (no dynamic cast: a conformance isolated to
    /// the main actor, `@MainActor MessageListener`, would fail one and drop every event).
    private struct Entry: @unchecked Sendable {  // the listener is only called on the callback queue
        let held: () -> Listener?
    }

    private let entries = Locked<[(id: String, entry: Entry)]>([])
    private let queue: DispatchQueue

    init(queue: DispatchQueue) { self.queue = queue }

    /// Registers the listener `held` returns while it lives; `held` must hold it weakly:
    /// `registry.add(id) { [weak listener] in listener }`.
    func add(_ id: String, weakly held: @escaping () -> Listener?) {
        let entry = Entry(held: held)
        entries.withLock { list in
            list.removeAll { $0.id == id || $0.entry.held() == nil }
            list.append((id, entry))
        }
    }

    func remove(_ id: String) {
        entries.withLock { $0.removeAll { $0.id == id } }
    }

    var count: Int { entries.withLock { $0.filter { $0.entry.held() != nil }.count } }

    /// Calls `body` for every live listener, in registration order, on the callback queue.
    func notify(_ body: @escaping @Sendable (Listener) -> Void) {
        let current = entries.withLock { $0.map(\.entry) }
        guard !current.isEmpty else { return }
        queue.async {
            for entry in current {
                if let listener = entry.held() { body(listener) }
            }
        }
    }
}
