import OfflineChatLocking

/// The client's one state value, under one lock: which session is current, how many logins
/// and logouts have begun (a login in flight holds a generation newer than the current
/// session's), and the last logout's token revocation. A login commits its session only if no
/// other login or logout began while it talked to the server, and that check and the swap are
/// one step; a logout takes the session away and records its revocation in the same step.
final class SessionSlot: Sendable {
    private struct State {
        var generation = 0
        var session: UserSession?
        var revocation: Task<ChatException?, Never>?
    }

    private let state = Locked(State())

    /// The logged-in session, nil when logged out.
    var current: UserSession? { state.withLock { $0.session } }

    /// Logins and logouts begun so far.
    var generation: Int { state.withLock { $0.generation } }

    /// A login begins: any login or logout after this one supersedes it. Returns its generation.
    func beginLogin() -> Int {
        state.withLock {
            $0.generation += 1
            return $0.generation
        }
    }

    /// Makes `started` current unless a login or logout began after `generation`. Returns the
    /// session it replaced (`.some(nil)`: none), or nil when it was superseded.
    func commit(_ started: UserSession, generation: Int) -> UserSession?? {
        state.withLock { state in
            guard state.generation == generation else { return .none }
            defer { state.session = started }
            return .some(state.session)
        }
    }

    /// A logout: supersedes any login in flight and takes the current session away (returned);
    /// when there was one, `revoke` starts the revocation of its token, kept as `revocation`.
    func logout(revoking revoke: (UserSession) -> Task<ChatException?, Never>) -> UserSession? {
        state.withLock { state in
            state.generation += 1
            defer { state.session = nil }
            if let session = state.session { state.revocation = revoke(session) }
            return state.session
        }
    }

    /// The last logout's request to revoke its token (its value: nil when it succeeded).
    var revocation: Task<ChatException?, Never>? { state.withLock { $0.revocation } }

    /// `old` ended: it is no longer current (if it still was). Returns the current session.
    func end(_ old: UserSession) -> UserSession? {
        state.withLock { state in
            if state.session === old { state.session = nil }
            return state.session
        }
    }
}
