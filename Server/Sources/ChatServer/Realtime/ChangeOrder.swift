/// One realtime socket's changes put in position order. Changes reach a node in commit order
/// on one SQLite writer, but with several writers (PostgreSQL, other nodes over the bus) a
/// later position can arrive first, one can arrive twice, or one can be lost. A socket sends
/// position `p + 1` after `p` and nothing else: a repeat is dropped, an early one is held
/// until the gap closes, and a gap that stays open is filled from the inbox by the loop. Two
/// different changes at one position are a fault (a frame no node wrote): neither is trusted,
/// and the position is read from the inbox at once, whose version wins.
struct ChangeOrder {
    /// The last position sent (the hello's before any change); nil until the hello.
    private(set) var position: Int64?
    private var held: [Int64: Delivery] = [:]
    /// When the oldest held change arrived (monotonic nanoseconds), nil when none is held.
    private(set) var heldSince: UInt64?
    /// Positions two different changes came for: nothing more is taken for them but the
    /// inbox's version.
    private var disputed: Set<Int64> = []
    /// Some position is disputed: the loop reads the inbox now.
    var conflicted: Bool { !disputed.isEmpty }

    /// Changes held at most; past it the socket is closed and its client resumes from its cursor.
    static let maxHeld = 1000

    var overflowed: Bool { held.count > Self.maxHeld }

    /// Something waits here for a gap to close (or a disputed position for the inbox).
    var holds: Bool { !held.isEmpty || conflicted }

    /// The hello went out at `position`: what was held after it, in order.
    mutating func start(at position: Int64, now: UInt64) -> [Delivery] {
        self.position = position
        return drain(now: now)
    }

    /// A change for this socket's user (and its place in a group's log, if it is a group's);
    /// returns those now ready to send, in order.
    mutating func receive(_ pts: Int64, _ body: String, group: GroupPlace? = nil, now: UInt64) -> [Delivery] {
        receive(Delivery(pts: pts, body: body, group: group), now: now)
    }

    /// The same for a change made into a `Delivery` once for all its readers (its bytes shared
    /// by their frames).
    mutating func receive(_ delivery: Delivery, now: UInt64) -> [Delivery] {
        let pts = delivery.pts
        if let position, pts <= position { return [] }
        // The common case, the next position with nothing held: sent as it is.
        if let position, pts == position + 1, !holds {
            self.position = pts
            return [delivery]
        }
        guard !disputed.contains(pts) else { return [] }
        if let other = held[pts], other.body != delivery.body {
            held[pts] = nil
            disputed.insert(pts)
            return []
        }
        held[pts] = delivery
        return drain(now: now)
    }

    /// Changes read from the inbox after `position` (a gap that stayed open, or a conflict):
    /// the inbox's version of a position replaces whatever is held for it.
    mutating func fill(_ changes: [Delivery], now: UInt64) -> [Delivery] {
        disputed = []
        for change in changes where position.map({ change.pts > $0 }) ?? true { held[change.pts] = change }
        return drain(now: now)
    }

    /// Releases what follows `position` without a gap. The wait for a gap is timed from when
    /// it was last narrowed.
    private mutating func drain(now: UInt64) -> [Delivery] {
        guard var position else {
            if heldSince == nil { heldSince = now }
            return []
        }
        var ready: [Delivery] = []
        for stale in held.keys where stale <= position { held[stale] = nil }
        while let delivery = held.removeValue(forKey: position + 1) {
            position += 1
            ready.append(delivery)
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

/// A change for one reader at their position `pts`, as stored (`StoredChange`), with its
/// place in its group's log when it is a group's.
struct Delivery: Sendable, Equatable {
    let pts: Int64
    let body: String
    /// `body`'s bytes, made once: every socket's frame of the change shares them.
    let bytes: [UInt8]
    var group: GroupPlace?
    /// Its frame without a cursor, made once for every socket that reads `cursor` frames (a
    /// group's change, whose `seq` is the same for all its members).
    var sharedFrame: [[UInt8]]?

    init(pts: Int64, body: String, bytes: [UInt8]? = nil, group: GroupPlace? = nil) {
        (self.pts, self.body, self.bytes, self.group) = (pts, body, bytes ?? Array(body.utf8), group)
    }
}
