import Foundation
import OfflineChatCache
import OfflineChatLocking
import Testing

@testable import OfflineChat

@Suite struct ListenerRegistryTests {
    final class Probe: ConnectionListener, @unchecked Sendable {
        let name: String
        let heard = Locked<[String]>([])
        init(_ name: String) { self.name = name }
        func onConnected() { heard.withLock { $0.append(name) } }
    }

    func drain(_ queue: DispatchQueue) { queue.sync {} }

    @Test func theSameIDReplacesAndRemovingAnIDRemovesIt() {
        let queue = DispatchQueue(label: "q")
        let registry = ListenerRegistry<any ConnectionListener>(queue: queue)
        let first = Probe("first")
        let second = Probe("second")
        let other = Probe("other")
        registry.add("a") { [weak first] in first }
        registry.add("a") { [weak second] in second }
        registry.add("b") { [weak other] in other }
        registry.notify { $0.onConnected() }
        drain(queue)
        #expect(first.heard.current.isEmpty && second.heard.current == ["second"] && other.heard.current == ["other"])
        registry.remove("a")
        registry.remove("missing")
        registry.notify { $0.onConnected() }
        drain(queue)
        #expect(second.heard.current == ["second"] && other.heard.current == ["other", "other"])
    }

    @Test func listenersAreHeldWeaklyAndCalledOnTheQueue() {
        let queue = DispatchQueue(label: "q")
        let registry = ListenerRegistry<any ConnectionListener>(queue: queue)
        var transient: Probe? = Probe("gone")
        registry.add("t") { [weak transient] in transient }
        #expect(registry.count == 1)
        transient = nil
        #expect(registry.count == 0, "the registry does not keep a listener alive")
        final class QueueCheck: ConnectionListener, @unchecked Sendable {
            let queue: DispatchQueue
            let onQueue = Locked(false)
            init(_ queue: DispatchQueue) { self.queue = queue }
            func onConnected() {
                onQueue.withLock { $0 = DispatchQueue.getSpecific(key: QueueCheck.key) == "callbacks" }
            }
            static let key = DispatchSpecificKey<String>()
        }
        queue.setSpecific(key: QueueCheck.key, value: "callbacks")
        let check = QueueCheck(queue)
        registry.add("q") { [weak check] in check }
        registry.notify { $0.onConnected() }
        drain(queue)
        #expect(check.onQueue.current)
    }
}
