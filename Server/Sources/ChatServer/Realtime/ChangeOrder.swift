/// One realtime socket's changes put in position order. Changes reach a node in commit order
/// on one SQLite writer, but with several writers (PostgreSQL, other nodes over the bus) a
/// later position can arrive first, one can arrive twice, or one can be lost. A socket sends
/// position `p + 1` after `p` and nothing else: a repeat is dropped, an early one is held
/// until the gap closes, and a gap that stays open is filled from the inbox by the loop.
struct ChangeOrder {
    /// The last position sent (the hello's before any change); nil until the hello.
    private(set) var position: Int64?
    private var held: [Int64: String] = [:]
    /// When the oldest held change arrived (monotonic nanoseconds), nil when none is held.
    private(set) var heldSince: UInt64?

    /// Changes held at most; past it the socket is closed and its client resumes from its cursor.
    static let maxHeld = 1000

    var overflowed: Bool { held.count > Self.maxHeld }

    /// The hello went out at `position`: what was held after it, in order.
    mutating func start(at position: Int64, now: UInt64) -> [(pts: Int64, body: String)] {
        self.position = position
        return drain(now: now)
    }

    /// A change for this socket's user; returns those now ready to send, in order.
    mutating func receive(_ pts: Int64, _ body: String, now: UInt64) -> [(pts: Int64, body: String)] {
        if let position, pts <= position { return [] }
        held[pts] = body
        return drain(now: now)
    }

    /// Changes read from the inbox after `position` (a gap that stayed open).
    mutating func fill(_ changes: [(pts: Int64, body: String)], now: UInt64) -> [(pts: Int64, body: String)] {
        var ready: [(pts: Int64, body: String)] = []
        for change in changes { ready += receive(change.pts, change.body, now: now) }
        return ready
    }

    /// Releases what follows `position` without a gap. The wait for a gap is timed from when
    /// it was last narrowed.
    private mutating func drain(now: UInt64) -> [(pts: Int64, body: String)] {
        guard var position else {
            if heldSince == nil { heldSince = now }
            return []
        }
        var ready: [(pts: Int64, body: String)] = []
        for stale in held.keys where stale <= position { held[stale] = nil }
        while let body = held.removeValue(forKey: position + 1) {
            position += 1
            ready.append((position, body))
        }
        self.position = position
        if held.isEmpty {
            heldSince = nil
        } else if heldSince == nil || !ready.isEmpty {
            heldSince = now
        }
        return ready
    }
}
