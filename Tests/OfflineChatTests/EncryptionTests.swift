import ChatTesting
import Foundation
import OfflineChatCache
import OfflineChatSQLite
import OfflineChatServerProcess
import Testing

@testable import OfflineChat

/// Records the reasons of cache resets, the queued messages they discard, and every logged line.
// `lines` under `lock`
final class ResetLog: OfflineCacheResetListener, MessageListener, ChatLogger, @unchecked Sendable {
    let events = EventQueue<String>(cancelled: "cancelled")
    private let lock = NSLock()
    private var lines: [(ChatLogLevel, String)] = []

    func onOfflineCacheReset(_ reason: OfflineCacheResetReason, _ pendingMessagesLost: Int) {
        events.push("\(reason.rawValue) \(pendingMessagesLost)")
    }

    func onOutboxMessageFailed(_ message: BaseMessage) {
        let text = (message as? TextMessage)?.text ?? "?"
        events.push(
            "failed \(text) \(message.getFailureReason().map { "\($0)" } ?? "nil") \(message.failureError?.errorCode ?? "")"
        )
    }

    func log(_ level: ChatLogLevel, _ message: String) { lock.withLock { lines.append((level, message)) } }
    var errors: [String] { lock.withLock { lines.filter { $0.0 == .error }.map(\.1) } }
    var all: [String] { lock.withLock { lines.map(\.1) } }
}

/// The encrypted cache: every reset reason provoked for real, and the status dictionary in
/// every state. The launches share one storage folder and one key store, as an app's do.
@Suite(.timeLimit(.minutes(2))) struct EncryptionTests {
    struct Device {
        let server: LiveChatd
        var storage = FileManager.default.temporaryDirectory.appendingPathComponent("enc-test-\(UUID().uuidString)")
        var keys = InMemoryKeyStore()
        var log = ResetLog()
        var tokens: [String: String] = [:]

        var cacheDirectory: URL { storage.appendingPathComponent("test/alice") }
        var databaseFile: URL { cacheDirectory.appendingPathComponent("cache.sqlite") }

        /// A launch of the app as `uid`: a new client on the same storage and key store.
        func launch(
            _ uid: String = "alice", encryption: Bool = true, behavior: EncryptionFailureBehavior = .onlineOnly
        ) async throws -> ChatClient {
            var offline = offlineOn()
            offline.encryption = encryption
            offline.encryptionFailureBehavior = behavior
            var config = ChatConfig(
                appID: "test", server: server.url, storageDirectory: storage, offline: offline,
                callbackQueue: DispatchQueue(label: "callbacks"), clock: ManualClock(), logger: log)
            config.keyStore = keys
            let client = try ChatClient(config: config)
            client.addOfflineCacheResetListener("log", log)
            client.addMessageListener("log", log)
            try await client.login(uid: uid, authToken: tokens[uid]!)
            return client
        }

        /// The app goes away without logging out (the cache stays on disk).
        func quit(_ client: ChatClient) {
            if let current = client.session.current { client.end(current, wipe: false) }
        }
    }

    func device(users: [String] = ["alice"]) async throws -> Device {
        var device = Device(server: try LiveChatd())
        for uid in users { device.tokens[uid] = try await device.server.user(uid) }
        _ = try await device.server.user("bob")
        return device
    }

    func status(_ client: ChatClient) -> [String] {
        let status = client.getOfflineEncryptionStatus()
        return ["enabled", "atRest", "keyStorage", "cipherAvailable", "cipher"].map { key in
            let value = status[key]
            if value is NSNull { return "\(key)=null" }
            return "\(key)=\(value.map { "\($0)" } ?? "missing")"
        } + [status["leakage"] is String ? "leakage" : "no leakage"]
    }

    /// Queues `count` messages to bob while chatd is away (they stay in the outbox).
    func queue(_ count: Int, on client: ChatClient, device: Device) async throws {
        device.server.stop()
        for index in 0..<count {
            client.sendTextMessage(
                message: TextMessage(receiverUid: "bob", text: "queued \(index)", receiverType: .user),
                onMessageSent: { _ in }, onError: { _ in })
        }
        for _ in 0..<100 where client.getPendingMessages().count < count { await Task.yield() }
        #expect(client.getPendingMessages().count == count)
        try device.server.restart()
    }

    @Test(.enabled(if: Connection.cipherAvailable)) func anEncryptedCacheProvesItselfAndKeepsTextOffTheDisk()
        async throws
    {
        let device = try await device()
        let alice = try await device.launch()
        #expect(
            status(alice) == [
                "enabled=true", "atRest=SQLCIPHER", "keyStorage=KEYSTORE", "cipherAvailable=true",
                "cipher=\(Connection.cipherVersion ?? "?")", "leakage"
            ])
        let marker = "the-secret-marker-\(UUID().uuidString)"
        _ = try await device.server.send(marker, from: try await device.server.token("bob"), to: "alice")
        for try await _ in try MessagesRequest.MessageRequestBuilder().set(uid: "bob").build(client: alice).previous() {
        }
        let cache = try #require(alice.session.current?.cache)
        #expect(try cache.cachedPage(.conversation("alice~bob"), .latest, limit: 10).first?.text == marker, "cached")
        for name in ["cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm", "cache.sqlite-journal"] {
            let bytes =
                FileManager.default.contents(atPath: device.cacheDirectory.appendingPathComponent(name).path) ?? Data()
            #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(name) holds the text in the clear")
        }
        #expect(!device.log.all.contains { $0.contains(marker) })
        device.quit(alice)

        // Debian's sqlcipher shell opens it with the key; sqlite3 cannot.
        let secret = try #require(try device.keys.load(account: "test/alice"))
        let hex = secret.prefix(32).map { String(format: "%02x", $0) }.joined()
        #expect(!device.log.all.contains { $0.lowercased().contains(hex) }, "no log line holds the key")
        #expect(!"\(alice.getOfflineEncryptionStatus())".contains(hex))
        let opened = await shell(
            "/usr/bin/sqlcipher", [device.databaseFile.path],
            input: "PRAGMA key = \"x'\(hex)'\";\nPRAGMA cipher_page_size = 4096;\nSELECT text FROM messages;\n")
        #expect(opened.output.contains(marker), "\(opened)")
        let refused = await shell(
            "/usr/bin/sqlite3", [device.databaseFile.path], input: "SELECT count(*) FROM messages;\n")
        #expect(refused.status != 0 && refused.output.contains("not a database"), "\(refused)")
    }

    @Test(.enabled(if: Connection.cipherAvailable)) func aLostKeyRebuildsTheCache() async throws {
        let device = try await device()
        let first = try await device.launch()
        try await queue(2, on: first, device: device)
        device.quit(first)
        try device.keys.delete(account: "test/alice")
        let second = try await device.launch()
        #expect(await device.log.events.next() == "keyLost -1")
        #expect(second.getPendingMessages().isEmpty && second.isOfflineEnabled())
        #expect(status(second).prefix(3) == ["enabled=true", "atRest=SQLCIPHER", "keyStorage=KEYSTORE"])
        #expect(second.getLastSyncTimestamp() == 0, "the next sync is a reInstall cold start")
        let syncLog = SyncLog()
        syncLog.attach(to: second)
        let connection = Recorder(queue: second.config.callbackQueue)
        second.addConnectionListener("c", connection)
        if second.getConnectionStatus() != .connected { _ = await connection.next(where: { $0 == "connected" }) }
        let clock = try #require(second.config.clock as? ManualClock)
        await clock.waitForSleepers(1)
        clock.advance(by: second.config.connectionSettleDelay)
        let sweep = await syncLog.sweep()
        #expect(sweep.first == "start reInstall=true" && sweep.last == "finish reInstall=true", "\(sweep)")
    }

    @Test(.enabled(if: Connection.cipherAvailable)) func anotherUsersKeyIsTheWrongKey() async throws {
        let device = try await device(users: ["alice", "carol"])
        let alice = try await device.launch()
        device.quit(alice)
        // carol's cache on another storage folder (alice's logins would wipe it) with the same key store.
        var carolsPhone = device
        carolsPhone.storage = device.storage.appendingPathComponent("elsewhere")
        let carol = try await carolsPhone.launch("carol")
        carolsPhone.quit(carol)
        // The key store now hands alice carol's key.
        try device.keys.save(try #require(try device.keys.load(account: "test/carol")), account: "test/alice")
        let relaunched = try await device.launch()
        #expect(await device.log.events.next() == "wrongKey -1")
        #expect(status(relaunched)[1] == "atRest=SQLCIPHER")
    }

    @Test(.enabled(if: Connection.cipherAvailable)) func aDamagedFileIsCorrupted() async throws {
        let device = try await device()
        for damage in [Damage.scribble, .truncate] {
            let client = try await device.launch()
            device.quit(client)
            try damage.apply(to: device.databaseFile)
            let relaunched = try await device.launch()
            #expect(await device.log.events.next() == "corrupted -1", "\(damage)")
            #expect(relaunched.isOfflineEnabled())
            device.quit(relaunched)
        }
    }

    @Test func aDamagedPlainCacheIsCorruptedToo() async throws {
        let device = try await device()
        for damage in [Damage.scribbleHeader, .scribble, .truncate] {
            let client = try await device.launch(encryption: false)
            device.quit(client)
            try damage.apply(to: device.databaseFile)
            let relaunched = try await device.launch(encryption: false)
            #expect(await device.log.events.next() == "corrupted -1", "\(damage)")
            #expect(relaunched.isOfflineEnabled())
            device.quit(relaunched)
        }
    }

    @Test func anOpenThatKeepsFailingEscalatesOnTheThirdLaunch() async throws {
        let device = try await device()
        let first = try await device.launch(encryption: Connection.cipherAvailable)
        device.quit(first)
        // The WAL's place is taken by a folder: SQLite cannot open it, for no reason the cache knows.
        try FileManager.default.createDirectory(
            at: device.cacheDirectory.appendingPathComponent("cache.sqlite-wal"), withIntermediateDirectories: true)
        for launch in 1...2 {
            let client = try await device.launch(encryption: Connection.cipherAvailable)
            #expect(!client.isOfflineEnabled(), "launch \(launch) runs online only")
            #expect(status(client)[1] == "atRest=NONE")
            let counter = try FileManager.default.attributesOfItem(
                atPath: device.cacheDirectory.appendingPathComponent("open-failures").path)
            #expect(counter[.posixPermissions] as? Int == 0o600, "the launch counter is private like the cache")
            device.quit(client)
        }
        let third = try await device.launch(encryption: Connection.cipherAvailable)
        #expect(await device.log.events.next() == "escalated -1")
        #expect(third.isOfflineEnabled())
    }

    @Test(.enabled(if: Connection.cipherAvailable)) func switchingEncryptionRebuildsAndCountsWhatWasQueued()
        async throws
    {
        let device = try await device()
        let plain = try await device.launch(encryption: false)
        #expect(
            status(plain) == [
                "enabled=false", "atRest=NONE", "keyStorage=NONE", "cipherAvailable=false", "cipher=null", "leakage"
            ])
        try await queue(2, on: plain, device: device)
        device.quit(plain)
        let encrypted = try await device.launch(encryption: true)
        #expect(await device.log.events.next() == "encryptionChanged 2", "the plaintext outbox could be counted")
        // Then each queued message, in the order it was composed.
        for index in 0..<2 {
            #expect(
                await device.log.events.next() == "failed queued \(index) discarded \(ChatException.messageDiscarded)")
        }
        #expect(encrypted.getPendingMessages().isEmpty)
        #expect(status(encrypted)[1] == "atRest=SQLCIPHER")
        try await queue(1, on: encrypted, device: device)
        device.quit(encrypted)
        let plainAgain = try await device.launch(encryption: false)
        #expect(await device.log.events.next() == "encryptionChanged 1", "the stored key still reads the old file")
        #expect(await device.log.events.next() == "failed queued 0 discarded \(ChatException.messageDiscarded)")
        #expect(status(plainAgain)[1] == "atRest=NONE")
        #expect(try device.keys.load(account: "test/alice") == nil, "a plaintext cache keeps no key")
    }

    @Test(.enabled(if: Connection.cipherAvailable))
    func aKeyStoreThatIsBrieflyLockedIsRetriedAndOneThatStaysLockedWritesNothing() async throws {
        let device = try await device()
        device.keys.failuresToSimulate = 2
        let retried = try await device.launch()
        #expect(retried.isOfflineEnabled() && status(retried)[1] == "atRest=SQLCIPHER")
        retried.logout()
        device.keys.failuresToSimulate = 50
        let locked = try await device.launch()
        #expect(!locked.isOfflineEnabled())
        #expect(status(locked).prefix(3) == ["enabled=true", "atRest=NONE", "keyStorage=NONE"])
        #expect(!FileManager.default.fileExists(atPath: device.databaseFile.path), "no plaintext cache instead")
    }

    /// iOS may purge a `Caches/` folder while the app is not running: the next launch reports
    /// the cache `.vanished` with what its outbox held when the app left the foreground.
    @Test func aVanishedCacheIsReportedWithWhatItsOutboxHeld() async throws {
        let device = try await device(users: ["alice", "carol"])
        let encrypt = Connection.cipherAvailable
        let first = try await device.launch(encryption: encrypt)
        try await queue(2, on: first, device: device)
        first.suspend()
        device.quit(first)
        try FileManager.default.removeItem(at: device.storage)
        let second = try await device.launch(encryption: encrypt)
        #expect(await device.log.events.next() == "vanished 2")
        #expect(second.isOfflineEnabled() && second.getPendingMessages().isEmpty)

        // An awaited flush notes the emptied outbox: a purge after it lost nothing, and says nothing.
        try await queue(1, on: second, device: device)
        second.suspend()
        second.resume()
        #expect(try await second.flushOutbox().sent == 1)
        device.quit(second)
        try FileManager.default.removeItem(at: device.storage)
        let third = try await device.launch(encryption: encrypt)
        #expect(third.isOfflineEnabled())

        // A purge found by a login that then fails (no network, and nothing cached to log in
        // from) is reported by the next login that succeeds.
        try await queue(3, on: third, device: device)
        third.suspend()
        device.quit(third)
        try FileManager.default.removeItem(at: device.storage)
        device.server.stop()
        await #expect(throws: ChatException.self) { try await device.launch(encryption: encrypt) }
        try device.server.restart()
        let fourth = try await device.launch(encryption: encrypt)
        #expect(await device.log.events.next() == "vanished 3")

        // A cache deleted on purpose (another user's login wipes alice's) is no vanished one.
        try await queue(1, on: fourth, device: device)
        fourth.suspend()
        device.quit(fourth)
        device.quit(try await device.launch("carol", encryption: encrypt))
        let afterWipe = try await device.launch(encryption: encrypt)
        #expect(afterWipe.isOfflineEnabled())
        device.log.events.push("end")
        #expect(await device.log.events.next() == "end")
    }

    @Test func logoutNeverFiresTheResetListener() async throws {
        let device = try await device()
        let first = try await device.launch(encryption: Connection.cipherAvailable)
        first.logout()
        let second = try await device.launch(encryption: Connection.cipherAvailable)
        second.logout()
        device.log.events.push("end")
        #expect(await device.log.events.next() == "end")
    }

    @Test(.enabled(if: !Connection.cipherAvailable)) func withoutSQLCipherOnlineOnlyKeepsNoCache() async throws {
        let device = try await device()
        let client = try await device.launch(encryption: true, behavior: .onlineOnly)
        #expect(!client.isOfflineEnabled())
        #expect(
            status(client) == [
                "enabled=true", "atRest=NONE", "keyStorage=NONE", "cipherAvailable=false", "cipher=null", "leakage"
            ])
        #expect(!FileManager.default.fileExists(atPath: device.databaseFile.path), "nothing written in the clear")
    }

    @Test(.enabled(if: !Connection.cipherAvailable)) func withoutSQLCipherPlaintextFallbackLogsTheDowngrade()
        async throws
    {
        let device = try await device()
        let client = try await device.launch(encryption: true, behavior: .plaintextFallback)
        #expect(client.isOfflineEnabled())
        #expect(
            status(client) == [
                "enabled=true", "atRest=NONE", "keyStorage=NONE", "cipherAvailable=false", "cipher=null", "leakage"
            ])
        #expect(device.log.errors.contains { $0.contains("NOT encrypted") })
    }
}

enum Damage: String, CustomStringConvertible {
    /// Random bytes over the first page, after the salt (or the plain header).
    case scribble
    /// Random bytes over the file's first bytes.
    case scribbleHeader
    /// The file cut in the middle of its second page.
    case truncate

    var description: String { rawValue }

    func apply(to file: URL) throws {
        let handle = try FileHandle(forUpdating: file)
        defer { try? handle.close() }
        switch self {
        case .scribble, .scribbleHeader:
            try handle.seek(toOffset: self == .scribble ? 100 : 0)
            try handle.write(contentsOf: Data((0..<2_000).map { _ in UInt8.random(in: 0...255) }))
        case .truncate:
            try handle.truncate(atOffset: 4_096 + 1_000)
        }
    }
}

/// Runs a program with `input` on its standard input; its output and errors as one text.
func shell(_ program: String, _ arguments: [String], input: String) async -> (status: Int32, output: String) {
    let run = await Subprocess.run(program, arguments, input: input)
    return (run.status, run.output + run.errors)
}
