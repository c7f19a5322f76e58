/// A network path as a path monitor reports it, reduced to what the connection cares about.
struct NetworkPath: Equatable, Sendable {
    /// The path can reach the network (`NWPath.Status.satisfied`).
    var satisfied: Bool
    /// The interfaces it would use, by name (`en0`, `pdp_ip0`, …).
    var interfaces: [String]
}

/// Which path updates are worth a reconnect now: the network came back, or the device moved
/// to other interfaces (Wi-Fi to cellular) while the old socket may be dead without knowing
/// it. The first update describes the start and is not a change; an unsatisfied path or a
/// repeat is not either (the connection notices a loss by itself).
struct NetworkPathChanges: Sendable {
    private var last: NetworkPath?

    /// Records `path`; true when the client should hear `networkChanged()`.
    mutating func update(_ path: NetworkPath) -> Bool {
        defer { last = path }
        guard let last, path.satisfied else { return false }
        return !last.satisfied || last.interfaces != path.interfaces
    }
}
