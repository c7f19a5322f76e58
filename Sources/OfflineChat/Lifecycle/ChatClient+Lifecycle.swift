/// The app's lifecycle. Wire these to the scene phase (or `NSApplication`'s notifications) and
/// to a network path monitor:
///
/// ```swift
/// .onChange(of: scenePhase) { _, phase in
///     switch phase {
///     case .background: chat.suspend()
///     case .active: chat.resume()
///     default: break
///     }
/// }
/// ```
///
/// Each acts on the current session, if any; none changes who is logged in or what is cached
/// or queued.
extension ChatClient {
    /// The app went to the background: closes the realtime connection cleanly and stops
    /// reconnecting until `resume()`. The cache, the outbox and the session stay: reads still
    /// answer from the cache, sends still queue (and, while suspended, wait). The connection
    /// listeners hear `onDisconnected` if it was up. A send already on the wire finishes (or
    /// fails and stays queued); nothing is lost or sent twice.
    public func suspend() {
        suspended.withLock { $0 = true }
        session.current?.suspend()
    }

    /// The app is in the foreground again: connects at once (no backoff left to wait out), and
    /// once the connection settles sends what is queued and catches up, as after any
    /// reconnect. Without a `suspend()` before, it cuts a reconnect's backoff short.
    public func resume() {
        suspended.withLock { $0 = false }
        guard let current = session.current else { return }
        current.realtime.resume()
        retryUnlockLoginIfDue(current)
    }

    /// The device's network changed (a path monitor saw it come back, or move to another
    /// interface): a connection waiting out its reconnect backoff connects now instead. A
    /// suspended connection stays suspended.
    public func networkChanged() {
        guard let current = session.current else { return }
        current.realtime.reconnectNow()
        retryUnlockLoginIfDue(current)
    }

    /// The device moved to other interfaces (Wi-Fi to cellular) while the network stayed up:
    /// a connected socket may be bound to the interface that went, and nothing would notice
    /// before the keepalive's timeout, so it is replaced now; one waiting out a backoff connects
    /// now. A suspended connection stays suspended.
    func networkMoved() {
        guard let current = session.current else { return }
        if current.realtime.status == .connected && !suspended.withLock({ $0 }) {
            current.reconnectAfterMove()
        } else {
            networkChanged()
        }
    }
}

extension ChatClient {
    /// The device's protected data became available (the first unlock after a restart). On
    /// iOS, Mac Catalyst and visionOS the client observes
    /// `UIApplication.protectedDataDidBecomeAvailableNotification` and calls this itself; an
    /// app calls it where it learns the same another way. A session that started before it without
    /// its cache (the Keychain could not answer yet) logs in again with the same token, now
    /// with the cache: offline support and the queued messages come back. Otherwise nothing
    /// happens. Returns once that login is done; a failure is logged (the session goes on as
    /// it was), and one for want of a network is tried again when the connection is next up.
    /// One such login runs at a time (the app's call and the system's notification may both
    /// come): a second call meanwhile returns at once.
    public func protectedDataBecameAvailable() async {
        guard let current = session.current, current.cacheMayOpenLater else { return }
        let mine = current.unlockLogin.withLock { state in
            guard state != .running else { return false }
            state = .running
            return true
        }
        guard mine else { return }
        do {
            _ = try await login(uid: current.user.uid, authToken: current.api.token)
            current.unlockLogin.withLock { $0 = .idle }
        } catch {
            config.logger.log(.warning, "the cache could not be opened after the device's unlock: \(error)")
            let transient = (error as? ChatException)?.isTransient == true
            current.unlockLogin.withLock { $0 = transient ? .due : .idle }
        }
    }

    /// Runs the unlock's login again if the last one got no answer (`UserSession.unlockLogin`).
    func retryUnlockLoginIfDue(_ current: UserSession) {
        let due = current.unlockLogin.withLock { state in
            guard state == .due else { return false }
            state = .idle
            return true
        }
        if due { Task { await protectedDataBecameAvailable() } }
    }
}
