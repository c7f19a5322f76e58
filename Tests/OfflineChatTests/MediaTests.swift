import ChatTesting
import Foundation
import OfflineChatProtocol
import Testing

@testable import OfflineChat

@Suite(.timeLimit(.minutes(1))) struct MediaTests {
    /// alice signed in (offline support on) with one media message from bob carrying `attachment`.
    func aliceWithMediaFromBob(
        _ attachment: (LiveChatd, String) async throws -> OfflineChatProtocol.Attachment
    ) async throws
        -> (LiveChatd, ChatClient, MediaMessage)
    {
        let server = try LiveChatd()
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        let sent = try await attachment(server, bobToken)
        let (status, answer) = try await server.request(
            "POST", Endpoints.messages, token: bobToken,
            json: SendMessageRequest(muid: "img", receiver: "alice", type: "image", attachment: sent))
        #expect(status == 201, "\(String(decoding: answer, as: UTF8.self))")
        let alice = try makeClient(server, offline: offlineOn())
        try await alice.login(uid: "alice", authToken: aliceToken)
        var media: MediaMessage?
        for try await phase in try MessagesRequest.MessageRequestBuilder().set(uid: "bob").build(client: alice)
            .previous()
        {
            if case .server(let messages) = phase { media = messages.first as? MediaMessage }
        }
        return (server, alice, try #require(media))
    }

    @Test func aDownloadedFileLivesInTheCacheAndFillsLocalPath() async throws {
        var uploaded: OfflineChatProtocol.Attachment?
        let (server, alice, received) = try await aliceWithMediaFromBob { server, bob in
            let attachment = try await server.upload(
                Data(count: 50_000), name: "photo.jpg", mimeType: "image/jpeg", token: bob)
            uploaded = attachment
            return attachment
        }
        #expect(received.attachment == uploaded && received.localPath == nil)
        let before = alice.getCacheSize()
        let downloaded = try await alice.downloadMedia(received)
        let path = try #require(downloaded.localPath)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 50_000)
        #expect(alice.getCacheSize() >= before + 50_000, "media counts in the cache size")

        // Later reads, cached and server, carry the local copy.
        var paths: [String?] = []
        for try await phase in try MessagesRequest.MessageRequestBuilder().set(uid: "bob").build(client: alice)
            .previous()
        {
            switch phase {
            case .cached(let messages), .server(let messages):
                paths.append((messages.first as? MediaMessage)?.localPath)
            }
        }
        #expect(paths == [path, path])
        withExtendedLifetime(server) {}
    }

    /// A message naming a file on the device (here the user's own cache key file) is never
    /// opened: a sender could make the app copy its secrets into the media folder.
    @Test func aFileURLFromAMessageIsNeverOpened() async throws {
        let (server, alice, received) = try await aliceWithMediaFromBob { server, bob in
            try await server.upload(Data(count: 10), name: "x.png", mimeType: "image/png", token: bob)
        }
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString)")
        try Data("the key".utf8).write(to: secret)
        for url in [secret.absoluteString, "FILE://\(secret.path)", "/dev/zero"] {
            let forged = try #require(BaseMessage.make(received.payload, source: .server) as? MediaMessage)
            forged.attachment?.url = url
            await #expect(throws: ChatException.self, "\(url)") { try await alice.downloadMedia(forged) }
        }
        let media = try #require(alice.session.current?.cache?.mediaDirectory)
        #expect(try FileManager.default.contentsOfDirectory(atPath: media.path).isEmpty, "nothing copied")
        withExtendedLifetime(server) {}
    }

    /// A download stops at the size its attachment states (and at `maxMediaDownloadSize`).
    @Test func aDownloadLargerThanItsAttachmentSaysIsRefused() async throws {
        let (server, alice, received) = try await aliceWithMediaFromBob { server, bob in
            var attachment = try await server.upload(
                Data(count: 200_000), name: "big.jpg", mimeType: "image/jpeg", token: bob)
            attachment.size = 1_000  // the sender lies
            return attachment
        }
        do {
            _ = try await alice.downloadMedia(received)
            Issue.record("a 200 kB answer to a 1 kB attachment was stored")
        } catch let error as ChatException {
            #expect(error.errorCode == ChatException.mediaTooLarge, "\(error)")
        }
        let media = try #require(alice.session.current?.cache?.mediaDirectory)
        #expect(try FileManager.default.contentsOfDirectory(atPath: media.path).isEmpty)
        withExtendedLifetime(server) {}
    }
}
