import Foundation
import OfflineChatCache
import OfflineChatSQLite

extension ChatClient {
    /// Logs in with a token from your backend (chatd's `POST /v1/admin/users/{uid}/tokens`).
    ///
    /// Online, the server checks the token. With offline support on and this user's cache on
    /// the device, a login without a connection succeeds from the cache when the token is
    /// the one the cache was opened with; the realtime connection keeps trying meanwhile.
    /// Once the login succeeded, the previous session ends and any other user's cache of the
    /// app is wiped; a rejected token wipes this user's. A logout (or another login) while
    /// this one waits for the server wins: this one then fails with `ERROR_USER_NOT_LOGGED_IN`.
    @discardableResult
    public func login(uid: String, authToken: String) async throws -> User {
        guard !uid.isEmpty, uid.allSatisfy(Self.idCharacters.contains) else {
            throw ChatException.invalid("`uid` is not a valid uid")
        }
        let generation = session.beginLogin()
        let api = APIClient(
            baseURL: config.server, token: authToken,
            transport: config.httpTransport
                ?? HTTPTransports.platformDefault(
                    timeout: config.requestTimeout, trustedCertificates: config.trustedCertificates))
        let opening = UserSession.openCache(
            uid: uid, directory: cacheDirectory(for: uid), account: keyAccount(uid), config: config)
        let cache = opening.cache
        let user: User
        do {
            let me: UserPayload = try await api.get(Endpoints.me)
            guard me.uid == uid else {
                throw ChatException(.authTokenInvalid, "the token belongs to \(me.uid), not \(uid)")
            }
            user = User(me)
            try? cache?.setMeta(MetaKey.token, authToken)
            try? cache?.setMeta(MetaKey.me, String(decoding: try APIClient.encoder.encode(me), as: UTF8.self))
        } catch let error as ChatException {
            if error.isAuthFailure || error.code == .authTokenInvalid {
                cache?.close()
                // This user's cache belongs to a token that no longer works, unless a live
                // session of the same user is using it.
                if session.current?.user.uid != uid { forgetCache(of: uid) }
                throw error
            }
            guard error.code == .internetUnavailable, let cache,
                let known = Self.cachedUser(cache, token: authToken)
            else {
                cache?.close()
                throw error
            }
            user = known
        }
        let started = UserSession(
            user: user, api: api,
            realtime: RealtimeConnection(
                url: UserSession.realtimeURL(config), token: authToken, transport: transport, config: config),
            opening: opening, config: config, dispatch: dispatch, host: self)
        let me = try commit(started, generation: generation)
        if let (reason, lost) = opening.reset {
            config.logger.log(
                .warning, "the offline cache was rebuilt (\(reason.rawValue)); \(lost) queued messages lost")
            // The reset first, then each queued message it discarded, in composed order (both
            // on the callback queue).
            resetListeners.notify { $0.onOfflineCacheReset(reason, lost) }
            for item in opening.discarded {
                let message = Outbox.failedMessage(item, reason: .discarded, error: Outbox.discardError(item.localId))
                messageListeners.notify { $0.onOutboxMessageFailed(message) }
            }
            if let cache { CacheOpener.resetReported(in: cache) }
        }
        // Recorded outside the cache only now: had this login failed, a vanished cache would
        // still be told at the next one.
        started.noteQueued()
        return me
    }

    /// Makes `started` the session unless a login or logout came in meanwhile; ends the
    /// previous session and wipes other users' caches; starts the new one.
    private func commit(_ started: UserSession, generation: Int) throws -> User {
        guard case .some(let replaced) = session.commit(started, generation: generation) else {
            started.tasks.cancelAll()
            started.cache?.close()
            throw ChatException(.userNotLoggedIn, "a logout or another login came first")
        }
        if let replaced {
            end(replaced, wipe: replaced.user.uid != started.user.uid)
            // The same user again (a new token): a send the ended session had on the wire when
            // this one opened the outbox goes again (the server dedupes on its muid).
            if replaced.user.uid == started.user.uid { started.outbox?.recoverInterruptedSends() }
        }
        wipeOtherUsers(than: started.user.uid)  // with or without a cache of its own
        // The app is in the background: the session waits for `resume()` to connect. Its flag is
        // read after the session became current, so a `suspend()` in between reaches it either way.
        if suspended.current { started.suspend() }
        started.start()
        return started.user
    }

    /// The callback form of `login(uid:authToken:)`; callbacks run on the callback queue.
    public func login(
        uid: String, authToken: String, onSuccess: @escaping @Sendable (User) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        settle({ try await self.login(uid: uid, authToken: authToken) }, onSuccess: onSuccess, onError: onError)
    }

    /// Ends the session: closes the realtime connection, wipes the user's cache and asks chatd
    /// to revoke the token (`DELETE /v1/me/token`; best effort: offline, the token stays valid
    /// until it expires). A login still waiting for the server is abandoned.
    public func logout() {
        let ended = session.logout { current in
            // Also awaits the ended session's tasks (cancelled by `end` below).
            Task {
                async let stopped: Void = current.tasks.end()
                let failure: ChatException?
                do {
                    let _: APIClient.NoContent = try await current.api.send(
                        "DELETE", Endpoints.meToken, body: nil as String?)
                    failure = nil
                } catch {
                    failure = error as? ChatException ?? ChatException.offline("\(error)")
                }
                await stopped
                return failure
            }
        }
        if let ended { end(ended, wipe: true) }
    }

    /// `logout()`, then `onSuccess` once chatd revoked the token (or there was no session), or
    /// `onError` when it could not be asked (offline: the token stays valid until it expires);
    /// either way only after every task of the ended session has returned. The session is over
    /// either way. Callbacks run on the callback queue.
    public func logout(onSuccess: @escaping @Sendable () -> Void, onError: @escaping @Sendable (ChatException) -> Void)
    {
        logout()
        let revocation = session.revocation
        let queue = config.callbackQueue
        Task {
            let failure = await revocation?.value ?? nil
            queue.async { if let failure { onError(failure) } else { onSuccess() } }
        }
    }

    /// Whether this session keeps a local cache (offline support on and available).
    public func isOfflineEnabled() -> Bool {
        if let current = session.current { return current.cache != nil }
        let offline = config.offline
        return offline.enabled
            && (!offline.encryption || Connection.cipherAvailable
                || offline.encryptionFailureBehavior == .plaintextFallback)
    }

    /// Stops a session; `wipe` deletes its cache (logout, a rejected token, another user).
    func end(_ old: UserSession, wipe: Bool) {
        let successor = session.end(old)
        // Logout and a rejected token fail whatever is still queued (`.discarded`). The app
        // hears the connection go unless a newer session is current (it reports its own).
        if old.end(discardingOutbox: wipe) && successor == nil {
            connectionListeners.notify { $0.onDisconnected() }
        }
        // Never delete the files a newer session of the same user has open.
        if wipe && successor?.user.uid != old.user.uid { forgetCache(of: old.user.uid, ledger: old.ledger) }
    }

    func cacheDirectory(for uid: String) -> URL {
        config.storageDirectory.appendingPathComponent(config.appID).appendingPathComponent(uid)
    }

    /// The key store account of a user's cache key.
    func keyAccount(_ uid: String) -> String { "\(config.appID)/\(uid)" }

    /// Deletes every other user's cache of this app on the device.
    private func wipeOtherUsers(than uid: String) {
        let appDirectory = config.storageDirectory.appendingPathComponent(config.appID)
        for other in (try? FileManager.default.contentsOfDirectory(atPath: appDirectory.path)) ?? [] where other != uid
        {
            forgetCache(of: other)
        }
    }

    /// Deletes a user's cache on purpose, with its key and its outbox ledger (so the next
    /// login starts afresh instead of reporting the cache `.vanished`). The ledger goes first:
    /// a process that dies half-way leaves a cache to open, never a false `.vanished`. `ledger`:
    /// the ending session's, so that none of its notes lands after this.
    private func forgetCache(of uid: String, ledger: QueuedLedger? = nil) {
        let keyStore = config.resolvedKeyStore
        ledger?.forget()
        QueuedLedger(keyStore: keyStore, keyAccount: keyAccount(uid)).forget()
        try? keyStore.delete(account: keyAccount(uid))
        try? ChatCache.destroy(directory: cacheDirectory(for: uid))
    }

    private static func cachedUser(_ cache: ChatCache, token: String) -> User? {
        guard (try? cache.meta(MetaKey.token)) == token, let json = try? cache.meta(MetaKey.me),
            let payload = try? APIClient.decoder.decode(UserPayload.self, from: Data(json.utf8))
        else { return nil }
        return User(payload)
    }

    enum MetaKey {
        static let token = "session.token"
        static let me = "session.user"
    }
}

extension ChatClient: SessionHost {
    func session(_ session: UserSession, reports status: ConnectionStatus) {
        if status == .connected { retryUnlockLoginIfDue(session) }
        connectionListeners.notify { listener in
            switch status {
            case .connecting: listener.onConnecting()
            case .connected: listener.onConnected()
            case .disconnected: listener.onDisconnected()
            }
        }
    }

    /// The server no longer accepts the session's token: logged out, cache wiped (unless a
    /// newer session is current by now).
    func sessionRejected(_ rejected: UserSession) {
        guard session.current === rejected else { return }
        end(rejected, wipe: true)
        config.logger.log(.warning, "the server rejected the session's token; logged out and wiped the cache")
    }
}
