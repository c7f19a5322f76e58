import ChatCache
import Foundation
import SQLiteKit

extension ChatClient {
    /// Logs in with a token from your backend (chatd's `POST /v1/admin/users/{uid}/tokens`).
    ///
    /// Online, the server checks the token. With offline support on and this user's cache on
    /// the device, a login without a connection succeeds from the cache when the token is
    /// the one the cache was opened with; the realtime connection keeps trying meanwhile.
    /// A different user's cache is wiped first, and a rejected token wipes this user's.
    @discardableResult
    public func login(uid: String, authToken: String) async throws -> User {
        guard !uid.isEmpty, uid.allSatisfy(Self.idCharacters.contains) else { throw ChatException.invalid("`uid` is not a valid uid") }
        if let previous = session.current { end(previous, wipe: previous.user.uid != uid) }
        let api = APIClient(baseURL: config.server, token: authToken, session: APIClient.session(timeout: config.requestTimeout))
        let cache = try openCache(for: uid)
        let user: User
        do {
            let me: UserPayload = try await api.get(Endpoints.me)
            guard me.uid == uid else {
                throw ChatException(errorCode: ChatException.authTokenInvalid, errorDescription: "the token belongs to \(me.uid), not \(uid)")
            }
            user = User(me)
            try? cache?.setMeta(MetaKey.token, authToken)
            try? cache?.setMeta(MetaKey.me, String(decoding: try APIClient.encoder.encode(me), as: UTF8.self))
        } catch let error as ChatException {
            if error.isAuthFailure || error.errorCode == ChatException.authTokenInvalid {
                cache?.close()
                try? ChatCache.destroy(directory: cacheDirectory(for: uid))
                throw error
            }
            guard error.errorCode == ChatException.internetUnavailable, let cache, let known = Self.cachedUser(cache, token: authToken) else {
                cache?.close()
                throw error
            }
            user = known
        }
        let started = Session(user: user, api: api, realtime: makeRealtime(token: authToken), cache: cache)
        session.withLock { $0 = started }
        started.realtime.start()
        if cache != nil { Task { await refreshBlockedList(started) } }
        return user
    }

    /// The callback form of `login(uid:authToken:)`; callbacks run on the callback queue.
    public func login(uid: String, authToken: String, onSuccess: @escaping @Sendable (User) -> Void,
                      onError: @escaping @Sendable (ChatException) -> Void) {
        settle({ try await self.login(uid: uid, authToken: authToken) }, onSuccess: onSuccess, onError: onError)
    }

    /// Ends the session: closes the realtime connection and wipes the user's cache.
    public func logout() {
        guard let current = session.withLock({ value -> Session? in defer { value = nil }; return value }) else { return }
        end(current, wipe: true)
    }

    /// Whether this session keeps a local cache (offline support on and available).
    public func isOfflineEnabled() -> Bool {
        if let current = session.current { return current.cache != nil }
        return config.offline.enabled && !config.offline.encryption
    }

    /// Stops a session; `wipe` deletes its cache (logout, a rejected token, another user).
    func end(_ old: Session, wipe: Bool) {
        session.withLock { if $0 === old { $0 = nil } }
        old.realtime.stop()
        old.cache?.close()
        if wipe { try? ChatCache.destroy(directory: cacheDirectory(for: old.user.uid)) }
    }

    /// The server no longer accepts the session's token: logged out, cache wiped.
    func sessionRejected(_ rejected: Session) {
        end(rejected, wipe: true)
        config.logger.log(.warning, "the server rejected the session's token; logged out and wiped the cache")
    }

    func cacheDirectory(for uid: String) -> URL {
        config.storageDirectory.appendingPathComponent(config.appID).appendingPathComponent(uid)
    }

    /// This user's cache, after wiping any other user's of this app. Nil when offline
    /// support is off, or when encryption is requested (encrypted caches are not built yet:
    /// rather no cache than a plaintext one).
    private func openCache(for uid: String) throws -> ChatCache? {
        guard config.offline.enabled else { return nil }
        let appDirectory = config.storageDirectory.appendingPathComponent(config.appID)
        for other in (try? FileManager.default.contentsOfDirectory(atPath: appDirectory.path)) ?? [] where other != uid {
            try? ChatCache.destroy(directory: appDirectory.appendingPathComponent(other))
        }
        guard !config.offline.encryption else {
            config.logger.log(.error, "offline encryption is not available in this SDK version; running online only")
            return nil
        }
        do {
            let offline = config.offline
            let limits = CacheLimits(maxConversations: offline.maxConversations, maxMessagesPerConversation: offline.maxMessagesPerConversation,
                                     maxStorageSize: offline.maxStorageSize)
            return try ChatCache(directory: cacheDirectory(for: uid), uid: uid, limits: limits,
                                 clock: { [clock = config.clock] in clock.now() })
        } catch {
            config.logger.log(.error, "the offline cache cannot be opened (\(error)); running online only")
            return nil
        }
    }

    private static func cachedUser(_ cache: ChatCache, token: String) -> User? {
        guard (try? cache.meta(MetaKey.token)) == token, let json = try? cache.meta(MetaKey.me),
              let payload = try? APIClient.decoder.decode(UserPayload.self, from: Data(json.utf8)) else { return nil }
        return User(payload)
    }

    enum MetaKey {
        static let token = "session.token"
        static let me = "session.user"
    }
}
