import Testing

@testable import ChatServer

/// The realtime loop's queue (`CommandQueue`): a writer wakes the loop only for the first
/// command of a burst, and never leaves one queued without a wake pending.
struct CommandQueueTests {
    @Test func onlyTheFirstCommandOfABurstWakesTheLoopAndEveryOneAfterATakeDoes() {
        let queue = CommandQueue()
        #expect(queue.append([.catchUp]) == .first)
        #expect(queue.append([.catchUp, .catchUp]) == .behindOthers, "the loop was woken for the first")
        #expect(queue.takeAll().count == 3)
        #expect(queue.append([.catchUp]) == .first, "taken empty: the next command must wake the loop again")
        queue.close()
        #expect(queue.append([.catchUp]) == .refused)
        #expect(queue.takeAll().count == 1, "what was queued before the close stays for the loop")
    }
}
