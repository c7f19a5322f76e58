import Foundation

/// `GET /v1/health` asks the database whether it answers: one probe at a time, and every check
/// that arrives while one runs waits for its answer instead of sending its own. Anyone may ask
/// (a load balancer does, without credentials), so a flood of checks costs the database one
/// round trip at a time, never one each.
final class HealthProbe: Sendable {
    private let condition = NSCondition()
    private nonisolated(unsafe) var running = false  // guarded by `condition`
    private nonisolated(unsafe) var round = 0  // guarded by `condition`: probes finished
    private nonisolated(unsafe) var last = false  // guarded by `condition`: the last probe's answer

    /// Whether `store` answers: a probe of this call's own, or the one already under way.
    func isReachable(_ store: Store) -> Bool {
        condition.lock()
        if running {
            let waitingFor = round + 1
            while round < waitingFor { condition.wait() }
            defer { condition.unlock() }
            return last
        }
        running = true
        condition.unlock()
        let reachable = store.isReachable()
        condition.lock()
        (running, last, round) = (false, reachable, round + 1)
        condition.broadcast()
        condition.unlock()
        return reachable
    }
}
