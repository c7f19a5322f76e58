import Foundation
import OfflineChatCache
import OfflineChatProtocol
import OfflineChatSQLite
import Testing

@Suite struct KeyStoreTests {
    @Test func theFileKeyStoreKeepsEachSecretPrivateAndReplacesItWhole() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        let store = FileKeyStore(directory: directory)
        #expect(try store.load(account: "app/alice") == nil)
        try store.save(Data([1, 2, 3]), account: "app/alice")
        try store.save(Data([4, 5, 6, 7]), account: "app/alice")
        #expect(try store.load(account: "app/alice") == Data([4, 5, 6, 7]))
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files == ["app.alice.key"], "no temporary file left behind")
        let file = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(files[0]).path)
        #expect((file[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        try store.delete(account: "app/alice")
        try store.delete(account: "app/alice")
        #expect(try store.load(account: "app/alice") == nil)
    }
}

@Suite struct CacheOpenerTests {
    func opener(_ directory: URL, keys: InMemoryKeyStore, encrypt: Bool) -> CacheOpener {
        CacheOpener(
            directory: directory, uid: "alice", account: "app/alice", encrypt: encrypt, keyStore: keys,
            limits: CacheLimits(), clock: { 0 })
    }

    @Test(.enabled(if: Connection.cipherAvailable))
    func anUnreadableCacheThatCannotBeDeletedLeavesTheSessionWithoutOne() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "opener-\(UUID().uuidString)/alice")
        let keys = InMemoryKeyStore()
        let first = opener(directory, keys: keys, encrypt: true).open()
        first.cache?.close()
        #expect(first.encrypted && first.reset == nil)
        try keys.delete(account: "app/alice")
        var stuck = opener(directory, keys: keys, encrypt: true)
        stuck.removeDirectory = { _ in throw CocoaError(.fileWriteNoPermission) }
        let opening = stuck.open()
        #expect(opening.cache == nil && opening.problem?.contains("cannot be deleted") == true)
        #expect(try keys.load(account: "app/alice") == nil, "no key minted for a cache that was not made")
    }

    @Test(.enabled(if: Connection.cipherAvailable)) func theKeyIsStoredWithTheSaltOfItsDatabase() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "opener-\(UUID().uuidString)/alice")
        let keys = InMemoryKeyStore()
        let opening = opener(directory, keys: keys, encrypt: true).open()
        opening.cache?.close()
        let secret = try #require(try keys.load(account: "app/alice"))
        let head = try #require(
            FileManager.default.contents(atPath: directory.appendingPathComponent("cache.sqlite").path)
        ).prefix(16)
        #expect(secret.count == 48 && secret.suffix(16) == head, "32 key bytes, then the file's salt")
        let again = opener(directory, keys: keys, encrypt: true).open()
        #expect(again.cache != nil && again.reset == nil && again.keyFromStore)
        again.cache?.close()
    }
}

@Suite struct ReviewFixTests {
    @Test func aPlaintextCacheNeverWaitsOnTheKeyStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "opener-\(UUID().uuidString)/alice")
        let keys = InMemoryKeyStore()
        keys.failuresToSimulate = 100
        let opening = CacheOpener(
            directory: directory, uid: "alice", account: "app/alice", encrypt: false, keyStore: keys,
            limits: CacheLimits(), clock: { 0 }
        ).open()
        #expect(opening.cache != nil && opening.problem == nil, "a locked key store does not matter to a plain cache")
        opening.cache?.close()
    }

    @Test func anOutboxMoveIsStoredOnlyFromTheStateItWasComputedFrom() throws {
        let cache = try makeCache()
        var queued = message(0, from: "a", text: "q")
        queued.muid = "q1"
        let localId = try cache.enqueue(
            SendMessageRequest(muid: "q1", receiver: "b", text: "q"), showing: queued, maxPending: 10)
        let read = try #require(try cache.outboxItems().first)
        _ = try cache.removeFromOutbox(where: .one(localId))
        let claim = OutboxProgress(state: .sending, attempts: 1)
        #expect(try cache.moveOutbox([(read, claim)]).isEmpty, "a discarded item is not claimed")
        let other = try cache.enqueue(
            SendMessageRequest(muid: "q2", receiver: "b", text: "r"),
            showing: {
                var m = queued
                m.muid = "q2"
                return m
            }(), maxPending: 10)
        let otherRead = try #require(try cache.outboxItems().first)
        #expect(try cache.moveOutbox([(otherRead, claim)]) == [other])
        #expect(
            try cache.moveOutbox([(otherRead, OutboxProgress(state: .sending, attempts: 2))]).isEmpty,
            "claimed once: the second claim was computed from the state before the first")
        let stored = try #require(try cache.outboxItems().first)
        #expect(stored.progress == claim)
        let failed = OutboxProgress(
            state: .failed, attempts: 1, failureReason: "permanent", errorCode: "ERR_BLOCKED", errorMessage: "no")
        #expect(try cache.moveOutbox([(stored, failed)]) == [other])
        #expect(try cache.outboxItems().first?.progress == failed, "the failure and its error are stored")
    }

    @Test func removingAConversationDeletesItsMediaFiles() throws {
        let cache = try makeCache()
        try cache.storeLive(message(10, in: "group_g"))
        let file = try cache.storeMedia(Data(count: 5_000), messageId: 10, name: "photo.jpg")
        try cache.removeConversation("group_g")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache.mediaDirectory.path).isEmpty)
    }
}
