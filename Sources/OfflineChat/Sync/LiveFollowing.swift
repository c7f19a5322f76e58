/// Whether the realtime stream may move the sync point along with it.
///
/// Every change after a connection's `hello` cursor arrives on that connection, in order. So
/// once the cache holds every change up to where the stream starts, each live change it
/// stores extends that: the sync point can follow the stream, and the next reconnect replays
/// only what was missed while offline. That holds from the hello when the sync point is the
/// hello cursor itself (nothing happened since), or from the end of a sweep that started
/// after the hello and caught up (its cursor is at or past the hello's). It ends with the
/// connection, and with a rebuild (there is no sync point until the cold start).
struct LiveFollowing: Sendable, Equatable {
    /// Counts hellos and disconnects: a sweep that saw a different one started on another connection.
    private(set) var generation = 0
    private(set) var connected = false
    private(set) var following = false

    mutating func hello(atSyncPoint: Bool) {
        generation += 1
        connected = true
        following = atSyncPoint
    }

    mutating func disconnected() {
        generation += 1
        connected = false
        following = false
    }

    /// A sweep that started at `generation` caught up (or recorded the head of a cold start).
    mutating func caughtUp(startedAt generation: Int) {
        if connected && generation == self.generation { following = true }
    }

    /// The sync point is gone (a rebuild): nothing to follow until the cold start.
    mutating func rebuilt() {
        following = false
    }
}
