import OfflineChatLocking

/// Where a session's API client reports that chatd no longer accepts its token: any 401 from
/// chatd itself, whichever call met it (a read, a send from the outbox, a sync page, an upload,
/// the token probe). Set once the session is made; the login's own check reports to nobody (the
/// login handles its 401 itself).
final class AuthRejection: Sendable {
    private let handler = Locked<(@Sendable () -> Void)?>(nil)

    /// Who hears a rejection from now on.
    func set(_ handler: @escaping @Sendable () -> Void) { self.handler.withLock { $0 = handler } }

    func report() { handler.withLock { $0 }?() }
}
