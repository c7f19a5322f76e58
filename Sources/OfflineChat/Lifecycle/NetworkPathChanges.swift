/// A network path as a path monitor reports it, reduced to what the connection cares about.
struct NetworkPath: Equatable, Sendable {
    /// The path can reach the network (`NWPath.Status.satisfied`).
    var satisfied: Bool
    /// The interfaces it would use, by name (`en0`, `pdp_ip0`, …).
    var interfaces: [String]
}

/// Which path updates are worth acting on: the network came back (a connection waiting out
/// its backoff connects now), or the device moved to other interfaces while it stayed up (Wi-Fi
/// to cellular: a connected socket may be bound to the interface that went, and is replaced).
/// The first update describes the start and is not a change; an unsatisfied path or a repeat
/// is not either (the connection notices a loss by itself).
struct NetworkPathChanges: Sendable {
    enum Change: Equatable { case none, back, moved }
    private var last: NetworkPath?

    /// Records `path`; what changed since the last one.
    mutating func update(_ path: NetworkPath) -> Change {
        defer { last = path }
        guard let last, path.satisfied else { return .none }
        if !last.satisfied { return .back }
        return last.interfaces != path.interfaces ? .moved : .none
    }
}
