import Testing

@testable import ChatServer

/// Typing frames a socket may send, on a clock of the test's own (nanoseconds).
struct TypingBudgetTests {
    let second: UInt64 = 1_000_000_000

    @Test func aBurstThenTheRateThenTheDoorForAFlood() {
        var budget = TypingBudget()
        let burst = (0..<Int(TypingBudget.burst)).map { _ in budget.take(at: 0) }
        #expect(burst.allSatisfy { $0 == .send }, "a burst goes through")
        #expect(budget.take(at: 0) == .drop, "then the excess is dropped")
        #expect(budget.take(at: second / 4) == .send, "one more every quarter second")
        #expect(budget.take(at: second / 4) == .drop)
        // A person types for minutes at the rate and is never cut off.
        var person = TypingBudget()
        #expect((1...600).allSatisfy { person.take(at: UInt64($0) * second / 4) == .send })
        // A flood: nearly everything dropped, and the socket closed once it keeps on.
        var flood = TypingBudget()
        let verdicts = (0..<1_000).map { flood.take(at: UInt64($0) * second / 1_000) }
        let closed = verdicts.firstIndex(of: .close)
        #expect(closed != nil && closed! < 250, "closed within a quarter second of a thousand frames a second")
        #expect(verdicts[..<(closed ?? 0)].filter { $0 == .send }.count <= Int(TypingBudget.burst) + 1)
    }
}
