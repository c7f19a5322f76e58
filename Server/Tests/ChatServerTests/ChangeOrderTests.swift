import Testing

@testable import ChatServer

/// A socket sends each position once, in order, whatever order changes reach it in.
@Suite struct ChangeOrderTests {
    @Test func earlyChangesWaitForTheGapAndRepeatsAreDropped() {
        var order = ChangeOrder()
        #expect(order.start(at: 4, now: 0).isEmpty)
        #expect(order.receive(6, "six", now: 10).isEmpty, "5 is missing")
        #expect(order.heldSince == 10)
        #expect(order.receive(7, "seven", now: 20).isEmpty)
        #expect(order.receive(5, "five", now: 30).map(\.pts) == [5, 6, 7])
        #expect(order.heldSince == nil && order.position == 7)
        #expect(order.receive(6, "six again", now: 40).isEmpty, "a repeat")
        #expect(order.receive(3, "from before the hello", now: 50).isEmpty)
        #expect(order.receive(8, "eight", now: 60).map(\.body) == ["eight"])
    }

    @Test func changesBeforeTheHelloWaitForItAndThoseItCoversAreDropped() {
        var order = ChangeOrder()
        #expect(order.receive(3, "three", now: 1).isEmpty)
        #expect(order.receive(4, "four", now: 2).isEmpty)
        #expect(order.heldSince == 1)
        #expect(order.start(at: 3, now: 5).map(\.pts) == [4], "3 is in the hello's cursor")
        #expect(order.heldSince == nil)
    }

    @Test func aGapFilledFromTheInboxReleasesWhatWaited() {
        var order = ChangeOrder()
        _ = order.start(at: 0, now: 0)
        _ = order.receive(3, "three", now: 100)
        // The wait is timed from when the gap last narrowed.
        _ = order.receive(1, "one", now: 200)
        #expect(order.heldSince == 200)
        let filled = order.fill(
            [Delivery(pts: 1, body: "one"), Delivery(pts: 2, body: "two"), Delivery(pts: 3, body: "three")], now: 300)
        #expect(filled.map(\.pts) == [2, 3] && order.position == 3 && order.heldSince == nil)
    }

    @Test func tooManyHeldChangesOverflow() {
        var order = ChangeOrder()
        _ = order.start(at: 0, now: 0)
        for pts in 2...Int64(ChangeOrder.maxHeld + 1) { _ = order.receive(pts, "", now: 0) }
        #expect(!order.overflowed)
        _ = order.receive(Int64(ChangeOrder.maxHeld + 2), "", now: 0)
        #expect(order.overflowed)
    }

    /// A frame no node wrote (forged on the bus) that arrives before the real change at the same
    /// position must not make the real one a repeat: two versions of a held position are a
    /// fault, neither is sent, and the inbox's version is read at once and sent in order. (Kept
    /// first-come, the forged text reached the client and the real message was dropped.)
    @Test func twoVersionsOfAPositionAreResolvedFromTheInbox() {
        var order = ChangeOrder()
        _ = order.start(at: 0, now: 0)
        #expect(order.receive(2, "forged", now: 10).isEmpty, "1 is missing")
        #expect(order.receive(2, "real", now: 20).isEmpty)
        #expect(order.conflicted, "the loop reads the inbox at once")
        #expect(order.receive(1, "one", now: 30).map(\.body) == ["one"], "and stops before the conflict")
        #expect(order.receive(2, "forged again", now: 35).isEmpty)
        let filled = order.fill([Delivery(pts: 2, body: "real"), Delivery(pts: 3, body: "three")], now: 40)
        #expect(filled.map(\.body) == ["real", "three"] && !order.conflicted && order.position == 3)
    }
}
