/// Whether the realtime stream may move the sync point along with it.
///
/// Every change after a connection's `hello` cursor arrives on that connection, in order. So
/// once the cache holds every change up to where the stream starts, each live change it
/// stores extends that: the sync point can follow the stream, and the next reconnect replays
/// only what was missed while offline. That holds from the hello when the sync point is the
/// hello cursor itself (nothing happened since), or from the end of a sweep that started
/// after the hello and caught up (its cursor is at or past the hello's). It ends with the
/// connection, and when the cache loses track of the stream (see `lostTrack`). The cursor may
/// step back (a page read before some live changes), never past a change the cache lacks.
struct LiveFollowing: Sendable, Equatable {
    /// Counts hellos and disconnects: a sweep that saw a different one started on another connection.
    private(set) var generation = 0
    private(set) var connected = false
    private(set) var following = false

    /// Still connected on the connection of `generation` (nothing lost track since).
    func isOn(_ generation: Int) -> Bool { connected && generation == self.generation }

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

    /// The cache no longer holds everything up to the stream: a rebuild (no sync point until
    /// the cold start), a live change it failed to store or a frame it could not read (the
    /// replay must bring those), or a sync page about to drop a conversation (which may wipe
    /// what the stream stored since the page was read). Following waits for a sweep that
    /// starts after this; one already running no longer counts.
    mutating func lostTrack() {
        generation += 1
        following = false
    }
}
