import ChatTesting
import Foundation
import OfflineChatCache
import Testing

@testable import OfflineChat

/// Media sends through the outbox: the file is copied into the cache when queued, uploaded
/// and sent after the reconnect.
@Suite(.timeLimit(.minutes(1))) struct MediaSendTests {
    let outbox = OutboxTests()

    func file(_ bytes: Int, name: String = "photo.jpg") throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("media-src-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent(name)
        try Data((0..<bytes).map { UInt8($0 % 253) }).write(to: file)
        return file
    }

    @Test func offlineAMediaSendKeepsItsOwnCopyAndIsUploadedAndSentAfterTheReconnect() async throws {
        let world = try await outbox.world()
        world.server.stop()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        let source = try file(60_000)
        let original = try Data(contentsOf: source)
        let send = OutboxTests.SendLog()
        world.alice.sendMediaMessage(
            message: MediaMessage(receiverUid: "bob", fileurl: source.path, messageType: "image", receiverType: .user),
            onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        _ = await send.log.next()
        #expect(await send.log.next() == .error(ChatException.internetUnavailable), "queued, not failed")
        let copy = try #require((world.alice.getPendingMessages().first as? MediaMessage)?.localPath)
        let cache = try #require(world.alice.session.current?.cache)
        #expect(copy.hasPrefix(cache.mediaDirectory.path) && copy != source.path)
        #expect(FileManager.default.contents(atPath: copy) == original)
        try FileManager.default.removeItem(at: source)  // the app may delete its file: the copy is what gets sent
        let pending = try #require(world.alice.getPendingMessages().first as? MediaMessage)
        #expect(pending.attachment?.name == "photo.jpg" && pending.attachment?.mimeType == "image/jpeg")

        try world.server.restart()
        await reconnectAndSettle(world.alice, clock: world.clock, connection: world.connection)
        guard case .server(let ids) = await send.log.next(), let id = ids.first else {
            Issue.record("not sent")
            return
        }
        let (_, data) = try await world.server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages", token: world.bobToken)
        let onServer = try JSONDecoder().decode([MessagePayload].self, from: data)
        #expect(onServer.count == 1 && onServer.first?.type == "image")
        let attachment = try #require(onServer.first?.attachment)
        #expect(attachment.url.hasPrefix(Endpoints.media + "/") && attachment.size == 60_000)
        let (status, bytes) = try await world.server.request("GET", attachment.url, token: world.bobToken)
        #expect(status == 200 && bytes == original, "bob gets exactly the bytes alice queued")

        // The sent message owns the copy now (it is not uploaded or kept twice).
        let sent = try #require(try cache.message(id: id))
        #expect(sent.attachment == attachment)
        #expect(!FileManager.default.fileExists(atPath: copy))
        #expect(
            FileManager.default.contents(atPath: cache.mediaFile(messageId: id, name: "photo.jpg").path) == original)
        #expect(world.alice.getPendingMessages().isEmpty)

        // bob's SDK resolves the server-relative url and downloads with his token.
        let bob = try makeClient(world.server, offline: offlineOn())
        try await bob.login(uid: "bob", authToken: world.bobToken)
        let received = try #require(BaseMessage.make(onServer[0], source: .server) as? MediaMessage)
        let downloaded = try await bob.downloadMedia(received)
        #expect(downloaded.localPath.flatMap { FileManager.default.contents(atPath: $0) } == original)
    }

    /// iOS moves an app's container when the app is updated: the queued copy moves with the
    /// cache, and the send still goes (its path is kept relative to the cache's media folder).
    @Test func aQueuedMediaSendStillGoesAfterTheAppsContainerMoved() async throws {
        let world = try await outbox.world()
        world.server.stop()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        let source = try file(30_000)
        let original = try Data(contentsOf: source)
        await #expect(throws: ChatException.self, "queued, not failed") {
            try await world.alice.sendMediaMessage(
                message: MediaMessage(
                    receiverUid: "bob", fileurl: source.path, messageType: "image", receiverType: .user))
        }
        // The app is terminated with the send queued (nothing wiped), and its container moves.
        _ = try #require(world.alice.session.current).end(discardingOutbox: false)
        let moved = world.storage.deletingLastPathComponent().appendingPathComponent("moved-\(UUID().uuidString)")
        try FileManager.default.moveItem(at: world.storage, to: moved)

        try world.server.restart()
        let alice = try makeClient(world.server, clock: world.clock, offline: offlineOn(), storage: moved)
        let connection = Recorder(queue: alice.config.callbackQueue)
        alice.addConnectionListener("c", connection)
        try await alice.login(uid: "alice", authToken: try await world.server.token("alice"))
        let queued = try #require(alice.getPendingMessages().first as? MediaMessage)
        #expect(queued.localPath?.hasPrefix(moved.path) == true, "found where the cache is now")
        _ = await connection.next(where: { $0 == "connected" })
        await world.clock.waitForSleepers(1)
        world.clock.advance(by: alice.config.connectionSettleDelay)
        while !alice.getPendingMessages().isEmpty { await Task.yield() }
        let (_, data) = try await world.server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages", token: world.bobToken)
        let attachment = try #require(try JSONDecoder().decode([MessagePayload].self, from: data).first?.attachment)
        let (status, bytes) = try await world.server.request("GET", attachment.url, token: world.bobToken)
        #expect(status == 200 && bytes == original, "bob gets the bytes queued before the move")
    }

    @Test func aFileLargerThanTheCacheBudgetIsRefusedAndNothingIsQueued() async throws {
        var offline = offlineOn()
        offline.maxStorageSize = 512 << 10
        let world = try await outbox.world(offline: offline)
        let send = OutboxTests.SendLog()
        world.alice.sendMediaMessage(
            message: MediaMessage(
                receiverUid: "bob", fileurl: try file(600 << 10).path, messageType: "file",
                receiverType: .user),
            onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        #expect(await send.log.next() == .error(ChatException.offlineMediaTooLarge))
        #expect(world.alice.getPendingMessages().isEmpty)
    }

    @Test func aCopyThatFailsIsReportedAndNothingIsQueued() async throws {
        let world = try await outbox.world()
        let cache = try #require(world.alice.session.current?.cache)
        try? FileManager.default.removeItem(at: cache.mediaDirectory)
        try Data("not a folder".utf8).write(to: cache.mediaDirectory)  // the copy cannot land
        let send = OutboxTests.SendLog()
        world.alice.sendMediaMessage(
            message: MediaMessage(
                receiverUid: "bob", fileurl: try file(1_000).absoluteString, messageType: "image",
                receiverType: .user),
            onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        #expect(await send.log.next() == .error(ChatException.offlineMediaCopyFailed))
        #expect(world.alice.getPendingMessages().isEmpty)
    }

    @Test func badFileURLsGetAClearErrorBeforeAnythingIsQueued() async throws {
        let world = try await outbox.world()
        let send = OutboxTests.SendLog()
        for fileurl in ["", "https://example.com/x.jpg", "/no/such/file.jpg"] {
            world.alice.sendMediaMessage(
                message: MediaMessage(receiverUid: "bob", fileurl: fileurl, messageType: "image", receiverType: .user),
                onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
            #expect(await send.log.next() == .error(ChatException.invalidArgument))
        }
        #expect(world.alice.getPendingMessages().isEmpty)
    }

    @Test func discardingAQueuedMediaSendDeletesItsCopy() async throws {
        let world = try await outbox.world()
        world.server.stop()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        let send = OutboxTests.SendLog()
        world.alice.sendMediaMessage(
            message: MediaMessage(
                receiverUid: "bob", fileurl: try file(10_000).path, messageType: "image", receiverType: .user),
            onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        guard case .cached(let ids) = await send.log.next(), let localId = ids.first else {
            Issue.record("not queued")
            return
        }
        let copy = try #require((world.alice.getPendingMessages().first as? MediaMessage)?.localPath)
        #expect(FileManager.default.fileExists(atPath: copy))
        world.alice.discardLocalMessage(localId: localId)
        #expect(!FileManager.default.fileExists(atPath: copy))
    }

    @Test func withoutOfflineSupportTheFileIsUploadedAndSentAtOnce() async throws {
        let server = try LiveChatd()
        let token = try await server.user("alice")
        _ = try await server.user("bob")
        let alice = try makeClient(server)
        try await alice.login(uid: "alice", authToken: token)
        let send = OutboxTests.SendLog()
        alice.sendMediaMessage(
            message: MediaMessage(
                receiverUid: "bob", fileurl: try file(5_000, name: "notes.pdf").path, messageType: "file",
                receiverType: .user),
            onMessagePending: send.pending, onMessageSent: send.sent, onError: send.error)
        guard case .server(let ids) = await send.log.next(), let id = ids.first, id > 0 else {
            Issue.record("not sent")
            return
        }
        let (_, data) = try await server.request("GET", "\(Endpoints.messages)/\(id)", token: token)
        let message = try JSONDecoder().decode(MessagePayload.self, from: data)
        #expect(message.attachment?.mimeType == "application/pdf" && message.attachment?.size == 5_000)
    }
}
