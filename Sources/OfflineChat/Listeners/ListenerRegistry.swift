import ChatCache
import Foundation
import Locking

/// Listeners of one kind, held weakly and registered by ID: adding with an ID that is taken
/// replaces the old listener, removing an ID removes whatever is there. Callbacks run on the
/// configured callback queue.
final class ListenerRegistry<Listener>: Sendable {
    private struct Entry: @unchecked Sendable {  // the object is only touched on the callback queue
        weak var object: AnyObject?
    }

    private let entries = Locked<[(id: String, entry: Entry)]>([])
    private let queue: DispatchQueue

    init(queue: DispatchQueue) { self.queue = queue }

    func add(_ id: String, _ listener: Listener) {
        let entry = Entry(object: listener as AnyObject)
        entries.withLock { list in
            list.removeAll { $0.id == id || $0.entry.object == nil }
            list.append((id, entry))
        }
    }

    func remove(_ id: String) {
        entries.withLock { $0.removeAll { $0.id == id } }
    }

    var count: Int { entries.withLock { $0.filter { $0.entry.object != nil }.count } }

    /// Calls `body` for every live listener, in registration order, on the callback queue.
    func notify(_ body: @escaping @Sendable (Listener) -> Void) {
        let current = entries.withLock { $0.map(\.entry) }
        guard !current.isEmpty else { return }
        queue.async {
            for entry in current {
                if let listener = entry.object as? Listener { body(listener) }
            }
        }
    }
}
