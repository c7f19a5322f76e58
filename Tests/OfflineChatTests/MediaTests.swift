import ChatTesting
import Foundation
@testable import OfflineChat
import Testing

@Suite(.timeLimit(.minutes(1))) struct MediaTests {
    @Test func aDownloadedFileLivesInTheCacheAndFillsLocalPath() async throws {
        let server = try LiveChatd()
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("photo-\(UUID().uuidString).jpg")
        try Data(count: 50_000).write(to: source)
        let attachment = Attachment(url: source.absoluteString, name: "photo.jpg", size: 50_000, mimeType: "image/jpeg", extension: "jpg")
        let (status, _) = try await server.request("POST", Endpoints.messages, token: bobToken,
                                                   json: SendMessageRequest(muid: "img", receiver: "alice", type: "image", attachment: attachment))
        #expect(status == 201)
        let alice = try makeClient(server, offline: offlineOn())
        try await alice.login(uid: "alice", authToken: aliceToken)
        let request = try MessagesRequest.MessageRequestBuilder().set(uid: "bob").build(client: alice)
        var media: MediaMessage?
        for try await phase in request.previous() {
            if case .server(let messages) = phase { media = messages.first as? MediaMessage }
        }
        let received = try #require(media)
        #expect(received.attachment == attachment && received.localPath == nil)
        let before = alice.getCacheSize()
        let downloaded = try await alice.downloadMedia(received)
        let path = try #require(downloaded.localPath)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 50_000)
        #expect(alice.getCacheSize() >= before + 50_000, "media counts in the cache size")

        // Later reads, cached and server, carry the local copy.
        var paths: [String?] = []
        for try await phase in try MessagesRequest.MessageRequestBuilder().set(uid: "bob").build(client: alice).previous() {
            switch phase {
            case .cached(let messages), .server(let messages): paths.append((messages.first as? MediaMessage)?.localPath)
            }
        }
        #expect(paths == [path, path])
    }
}
