import Foundation
import Locking
import Testing

@testable import ChatServer

/// The bus's own life against a real `nats-server`.
@Suite(.enabled(if: NatsProcess.available))
struct NatsBusTests {
    /// Closing a connection makes NATS post its disconnect to a thread of its own, which may run
    /// after `close()` has returned and the bus is gone (chatd crashed at exit on it, in CI; this
    /// test crashed 4 runs of 4 before the fix). A closed bus tells its handler nothing more, and
    /// a freed one is never reached: many buses come and go here while NATS runs those callbacks.
    @Test func aClosedBusHearsNothingAndAFreedOneIsNeverReached() throws {
        let nats = try NatsProcess()
        let heardAfterClose = Locked(0)
        for _ in 0..<100 {
            let closed = Locked(false)
            var bus: NatsBus? = try NatsBus(url: nats.url)
            bus?.setHandler { _ in
                if closed.withLock({ $0 }) { heardAfterClose.withLock { $0 += 1 } }
            }
            bus?.close()
            closed.withLock { $0 = true }
            bus = nil
        }
        #expect(heardAfterClose.withLock { $0 } == 0, "no callback reached a bus after its close")
    }
}
