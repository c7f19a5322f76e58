import Foundation
import OfflineChatSQLite

/// Why a cache was thrown away and rebuilt.
public enum CacheResetReason: String, Sendable {
    /// Encrypted on disk, but the key is gone.
    case keyLost
    /// The stored key belongs to another database file.
    case wrongKey
    /// The file is damaged (truncated, scribbled over).
    case corrupted
    /// Opening failed on three launches in a row for a reason nothing else explains.
    case escalated
    /// The file's format (encrypted or not) differs from the configuration.
    case encryptionChanged
    /// The cache's files are gone while the key store still recorded its outbox (a purged
    /// `Caches/` folder, a deleted app folder): the count is what the outbox last held.
    case vanished
}

/// What opening a user's cache came to.
public struct CacheOpening: Sendable {
    /// Nil: no cache this session (offline support is unavailable).
    public var cache: ChatCache?
    /// Set when the old cache was thrown away: why, and how many queued messages went with it
    /// (-1 when they could not be counted).
    public var reset: (reason: CacheResetReason, pendingLost: Int)?
    /// For `.encryptionChanged`: the old file's queued messages that had not failed yet, in
    /// the order they were composed (their media copies went with the old cache). Each is lost
    /// with the rebuild and is to be reported failed with `.discarded`.
    public var discarded: [OutboxItem] = []
    /// The record of this cache's outbox size outside its folder; noted again as it changes.
    public var ledger: QueuedLedger?
    /// An encrypted open was proven (the key read the schema).
    public var encrypted = false
    /// The key came from (or was put into) the key store.
    public var keyFromStore = false
    /// Why there is no cache, or what was downgraded; for the log, never containing a key.
    public var problem: String?
    /// No cache for now, but one may open later: the key store could not answer (a Keychain
    /// before the device's first unlock). Nothing was counted toward a rebuild.
    public var retryLater = false

    public init(
        cache: ChatCache? = nil, reset: (reason: CacheResetReason, pendingLost: Int)? = nil, encrypted: Bool = false,
        keyFromStore: Bool = false, problem: String? = nil
    ) {
        self.cache = cache
        self.reset = reset
        self.encrypted = encrypted
        self.keyFromStore = keyFromStore
        self.problem = problem
    }
}

/// Opens a user's cache in the configured format, or rebuilds it, and says why. The rules:
/// - encryption on: the key (with the database's salt, to tell a swapped key from a damaged
///   file) comes from the key store; no key for an encrypted file is `.keyLost`; a key whose
///   salt is not the file's is `.wrongKey`; a file the right key cannot read is `.corrupted`;
///   a plaintext file is `.encryptionChanged`. A new key is 32 random bytes, minted here.
/// - encryption off: an encrypted file (one the key store still has a key for) is
///   `.encryptionChanged`; anything else unreadable `.corrupted`.
/// - any other failure to open counts a launch in `open-failures` (outside the database); the
///   third in a row is `.escalated`.
/// - a file that cannot be deleted leaves the session without a cache.
public struct CacheOpener: Sendable {
    public var directory: URL
    public var uid: String
    /// The key store account: `<appID>/<uid>`.
    public var account: String
    public var encrypt: Bool
    public var keyStore: any KeyStore
    public var limits: CacheLimits
    public var clock: @Sendable () -> Int64
    /// Transient key store failures are retried this many times.
    public var keyStoreAttempts = 3
    /// Deletes a cache directory (replaceable in tests, to make a deletion fail).
    public var removeDirectory: @Sendable (URL) throws -> Void = { try ChatCache.destroy(directory: $0) }

    public init(
        directory: URL, uid: String, account: String, encrypt: Bool, keyStore: any KeyStore, limits: CacheLimits,
        clock: @escaping @Sendable () -> Int64
    ) {
        self.directory = directory
        self.uid = uid
        self.account = account
        self.encrypt = encrypt
        self.keyStore = keyStore
        self.limits = limits
        self.clock = clock
    }

    static let saltLength = 16
    static let plaintextHeader = Array("SQLite format 3\0".utf8)

    var databaseFile: URL { directory.appendingPathComponent(ChatCache.databaseName) }
    var failureFile: URL { directory.appendingPathComponent("open-failures") }

    enum DiskFormat: Equatable {
        /// `inaccessible`: the file exists but cannot be opened right now (permissions, file
        /// protection before the first unlock, no descriptors left): not evidence of damage.
        case absent, plaintext
        case encrypted(salt: [UInt8])
        case unreadable, inaccessible
    }

    func diskFormat() -> DiskFormat {
        let path = databaseFile.path
        guard FileManager.default.fileExists(atPath: path) else { return .absent }
        guard let handle = FileHandle(forReadingAtPath: path) else { return .inaccessible }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: Self.saltLength)) ?? Data())
        if head.isEmpty { return .absent }  // created, never written
        if head == Self.plaintextHeader { return .plaintext }
        return head.count == Self.saltLength ? .encrypted(salt: head) : .unreadable
    }

    /// A stored key and the salt of the database it opens.
    struct KeyRecord {
        var key: EncryptionKey
        var salt: [UInt8]?

        var data: Data { Data(key.bytes + (salt ?? [])) }

        init(key: EncryptionKey, salt: [UInt8]?) {
            self.key = key
            self.salt = salt
        }

        init?(_ data: Data) {
            let bytes = [UInt8](data)
            guard bytes.count == 32 || bytes.count == 32 + CacheOpener.saltLength else { return nil }
            key = EncryptionKey(bytes: Array(bytes[0..<32]))
            salt = bytes.count > 32 ? Array(bytes[32...]) : nil
        }
    }

    /// The cache's meta key holding a reset not yet reported (`reason count`): a rebuild whose
    /// login then failed (no network, a logout first) reports it at the next open.
    public static let pendingResetKey = "reset.pending"

    /// Opens (or rebuilds) the cache. A reset stays recorded in the new cache until the caller
    /// has reported it (`resetReported`); the ledger is the caller's to note once it has.
    public func open() -> CacheOpening {
        let ledger = QueuedLedger(keyStore: keyStore, keyAccount: account)
        var opening = openOrRebuild(ledger)
        if let cache = opening.cache {
            opening.ledger = ledger
            if let (reason, lost) = opening.reset {
                try? cache.setMeta(Self.pendingResetKey, "\(reason.rawValue) \(lost)")
            } else if let pending = try? cache.meta(Self.pendingResetKey) {
                let parts = pending.split(separator: " ")
                if parts.count == 2, let reason = CacheResetReason(rawValue: String(parts[0])),
                    let lost = Int(parts[1])
                {
                    opening.reset = (reason, lost)
                }
            }
        }
        return opening
    }

    /// The reset `opening` brought has reached the app: it is no longer pending.
    public static func resetReported(in cache: ChatCache) {
        try? cache.setMeta(pendingResetKey, nil)
    }

    private func openOrRebuild(_ ledger: QueuedLedger) -> CacheOpening {
        if encrypt && !Connection.cipherAvailable {
            return CacheOpening(problem: "encryption is on but this build has no SQLCipher")
        }
        let format = diskFormat()
        if format == .inaccessible { return failedLaunch("the cache file cannot be opened right now") }
        // The key matters only for an encrypted cache (to open it, or to count what an
        // encrypted file still queues); a plaintext cache never waits on the key store.
        var record: KeyRecord?
        if encrypt || format != .plaintext && format != .absent {
            do {
                record = try loadKey()
            } catch {
                if encrypt {
                    var opening = CacheOpening(
                        problem: "the key store is unavailable (\(error)); running online only until it answers")
                    opening.retryLater = true
                    return opening
                }
                return failedLaunch(
                    "the key store is unavailable (\(error)) and the cache does not look like plain SQLite")
            }
        }
        var reset: (CacheResetReason, Int)?
        var discarded: [OutboxItem] = []
        switch (encrypt, format) {
        case (_, .absent):
            // No file, yet the ledger knew one: it vanished, with what its outbox held.
            if let queued = ledger.recorded() { reset = (.vanished, queued) }
        case (true, .plaintext):
            let old = queued(key: nil)
            (reset, discarded) = ((.encryptionChanged, old.lost), old.discarded)
        case (false, .encrypted):
            // Without a key there is no telling an encrypted file from a damaged plain one.
            guard let record else {
                reset = (.corrupted, -1)
                break
            }
            let old = queued(key: record.key)
            (reset, discarded) = ((.encryptionChanged, old.lost), old.discarded)
        case (true, .encrypted(let salt)):
            guard let record else {
                reset = (.keyLost, -1)
                break
            }
            if let stored = record.salt, stored != salt {
                reset = (.wrongKey, -1)
                break
            }
            return attempt(key: record.key, keyFromStore: true, salt: salt)
        case (false, .plaintext):
            return attempt(key: nil, keyFromStore: false, salt: nil)
        case (_, .unreadable):
            reset = (.corrupted, -1)
        case (_, .inaccessible):
            return failedLaunch("the cache file cannot be opened right now")
        }
        if let (reason, lost) = reset {
            var opening = rebuild(reason, pendingLost: lost)
            if opening.reset != nil { opening.discarded = discarded }
            return opening
        }
        return create()
    }

    /// Opens an existing file; a damaged one is rebuilt, another failure counts a launch.
    private func attempt(key: EncryptionKey?, keyFromStore: Bool, salt: [UInt8]?) -> CacheOpening {
        do {
            let cache = try ChatCache(directory: directory, uid: uid, key: key, limits: limits, clock: clock)
            do { try cache.checkReadable() } catch {
                cache.close()
                throw error
            }
            try? FileManager.default.removeItem(at: failureFile)
            return CacheOpening(cache: cache, encrypted: key != nil, keyFromStore: keyFromStore)
        } catch let error as SQLiteError where [ResultCode.notADatabase, .corrupt].contains(error.code.primary) {
            return rebuild(.corrupted, pendingLost: -1)
        } catch {
            return failedLaunch("\(error)")
        }
    }

    /// A launch whose open failed for no reason the rules know: online only this time; the
    /// third in a row rebuilds (`.escalated`).
    private func failedLaunch(_ reason: String) -> CacheOpening {
        let failures = countFailedLaunch()
        if failures >= 3 { return rebuild(.escalated, pendingLost: -1) }
        return CacheOpening(
            problem: "the offline cache cannot be opened (\(reason)); launch \(failures) of 3 before it is rebuilt")
    }

    /// Deletes the old cache and starts a new one in the configured format.
    private func rebuild(_ reason: CacheResetReason, pendingLost: Int) -> CacheOpening {
        do {
            try removeDirectory(directory)
        } catch {
            return CacheOpening(
                problem: "the old offline cache cannot be deleted (\(error)); offline support is off this session")
        }
        var opening = create()
        if opening.cache != nil { opening.reset = (reason, pendingLost) }
        return opening
    }

    /// A new, empty cache; encrypted under a fresh key recorded with the file's salt.
    private func create() -> CacheOpening {
        do {
            try? FileManager.default.removeItem(at: databaseFile)
            guard encrypt else {
                try? keyStore.delete(account: account)
                return CacheOpening(cache: try ChatCache(directory: directory, uid: uid, limits: limits, clock: clock))
            }
            let key = try Self.mintKey()
            let cache = try ChatCache(directory: directory, uid: uid, key: key, limits: limits, clock: clock)
            guard case .encrypted(let salt) = diskFormat() else {
                cache.close()
                return CacheOpening(problem: "the new cache is not encrypted on disk; refusing to use it")
            }
            do {
                try keyStore.save(KeyRecord(key: key, salt: salt).data, account: account)
            } catch {
                cache.close()
                try? ChatCache.destroy(directory: directory)
                return CacheOpening(
                    problem: "the key store refused the new key (\(error)); running online only this session")
            }
            return CacheOpening(cache: cache, encrypted: true, keyFromStore: true)
        } catch {
            return CacheOpening(problem: "a new offline cache cannot be created (\(error))")
        }
    }

    private func loadKey() throws -> KeyRecord? {
        var lastError: (any Error)?
        for _ in 0..<max(1, keyStoreAttempts) {
            do {
                return try keyStore.load(account: account).flatMap(KeyRecord.init)
            } catch {
                lastError = error
            }
        }
        throw lastError!
    }

    /// What the old file still queues: how many unsent messages it holds (queued or failed;
    /// -1 when it cannot be read), and the queued ones that had not failed yet, in composed
    /// order (empty when they cannot be read one by one, say from an older schema).
    private func queued(key: EncryptionKey?) -> (lost: Int, discarded: [OutboxItem]) {
        var options = Connection.Options()
        options.readOnly = true
        options.walMode = false
        guard let db = try? Connection(path: databaseFile.path, key: key, options: options) else { return (-1, []) }
        defer { try? db.close() }
        guard let count: Int = try? db.scalar("SELECT count(*) FROM outbox") else { return (-1, []) }
        let items =
            (try? ChatCache.outboxItems(db, media: nil, where: "o.state != ?", [OutboxItem.State.failed.rawValue]))
            ?? []
        return (
            count,
            items.map { item in
                var item = item
                item.mediaPath = nil  // the copy is deleted with the old cache
                return item
            }
        )
    }

    /// One more launch whose open failed; the count lives beside the database.
    private func countFailedLaunch() -> Int {
        let previous = (try? String(contentsOf: failureFile, encoding: .utf8)).flatMap { Int($0) } ?? 0
        try? String(previous + 1).write(to: failureFile, atomically: true, encoding: .utf8)
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: failureFile.path)
        return previous + 1
    }

    static func mintKey() throws -> EncryptionKey {
        var generator = SystemRandomNumberGenerator()
        return EncryptionKey(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}

extension ChatCache {
    /// Reads the first page of every table: a key that opens the schema but not the data, or
    /// a file damaged past its first page, fails here rather than on the first read.
    func checkReadable() throws {
        try read { db in
            for table in ["messages", "ranges", "conversations", "outbox", "meta"] {
                _ = try db.query("SELECT rowid FROM \(table) LIMIT 1")
            }
            let pages: Int64 = try db.scalar("PRAGMA page_count") ?? 0
            let size: Int64 = try db.scalar("PRAGMA page_size") ?? 4096
            let onDisk = ChatCache.fileSize(directory.appendingPathComponent(ChatCache.databaseName))
            if onDisk > 0
                && pages * size > onDisk
                    + ChatCache.fileSize(directory.appendingPathComponent(ChatCache.databaseName + "-wal"))
            {
                throw SQLiteError(code: .corrupt, message: "the cache file is shorter than its pages")
            }
        }
    }
}
