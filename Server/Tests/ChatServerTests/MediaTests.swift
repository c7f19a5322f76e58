import ChatProtocol
import Foundation
import Testing

@Suite struct MediaTests {
    @Test func anUploadAnswersAnAttachmentThatAnotherUserCanFetchAndSend() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let bytes = Data((0..<70_000).map { UInt8($0 % 251) })
        let upload = try await server.request("POST", Endpoints.media + "?name=photo.jpg", token: alice, body: bytes,
                                              headers: ["Content-Type": "image/jpeg"])
        #expect(upload.status == 201)
        let attachment = try upload.decode(Attachment.self)
        #expect(attachment.name == "photo.jpg" && attachment.extension == "jpg" && attachment.mimeType == "image/jpeg")
        #expect(attachment.size == Int64(bytes.count) && attachment.url.hasPrefix(Endpoints.media + "/"))

        let message = try await server.request("POST", Endpoints.messages, token: alice,
                                               json: SendMessageRequest(muid: "m1", receiver: "bob", type: "image", attachment: attachment))
        #expect(message.status == 201)
        let fetched = try await server.request("GET", attachment.url, token: bob)
        #expect(fetched.status == 200 && fetched.body == bytes)
        #expect(fetched.headers["content-type"] == "image/jpeg")
    }

    /// A repeated upload (a retry after a lost answer) stores nothing new and answers the same url.
    @Test func uploadsAreContentAddressedSoARetryIsHarmless() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bytes = Data("same bytes".utf8)
        let first = try await server.request("POST", Endpoints.media, token: alice, body: bytes).decode(Attachment.self)
        let second = try await server.request("POST", Endpoints.media, token: alice, body: bytes).decode(Attachment.self)
        #expect(first.url == second.url && first.name == "file")
        let stored = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory.appendingPathComponent("media").path)
        #expect(stored.filter { !$0.hasSuffix(".type") }.count == 1)
    }

    /// A file torn by a crash (an older chatd renamed without syncing) is never served, and
    /// the next upload of the right bytes writes it again.
    @Test func aTornFileIsNotServedAndARightUploadRewritesIt() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bytes = Data((0..<50_000).map { UInt8($0 % 253) })
        let attachment = try await server.request("POST", Endpoints.media, token: alice, body: bytes).decode(Attachment.self)
        server.stop()
        let file = server.dataDirectory.appendingPathComponent("media/" + String(attachment.url.dropFirst(Endpoints.media.count + 1)))
        try bytes.prefix(10_000).write(to: file)  // torn
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        let alice2 = try await restarted.token("alice")
        #expect(try await restarted.request("GET", attachment.url, token: alice2).status == 404, "the torn bytes are never served")
        let again = try await restarted.request("POST", Endpoints.media, token: alice2, body: bytes).decode(Attachment.self)
        #expect(again.url == attachment.url)
        let fetched = try await restarted.request("GET", attachment.url, token: alice2)
        #expect(fetched.status == 200 && fetched.body == bytes)
    }

    @Test func badUploadsAndFetchesGetClearErrors() async throws {
        let server = try LiveServer(arguments: ["--max-media", "2048"])
        let alice = try await server.user("alice")
        #expect(try await server.request("POST", Endpoints.media, body: Data("x".utf8)).status == 401)
        let empty = try await server.request("POST", Endpoints.media, token: alice, body: Data())
        #expect(empty.status == 422 && empty.error?.code == .validationFailed)
        let tooLarge = try await server.request("POST", Endpoints.media, token: alice, body: Data(count: 4096))
        #expect(tooLarge.status == 413 && tooLarge.error?.code == .payloadTooLarge)
        let slash = try await server.request("POST", Endpoints.media + "?name=a%2Fb", token: alice, body: Data("x".utf8))
        #expect(slash.status == 400)
        let badType = try await server.request("POST", Endpoints.media, token: alice, body: Data("x".utf8), headers: ["Content-Type": "nonsense"])
        #expect(badType.status == 400)
        #expect(try await server.request("GET", Endpoints.media + "/" + String(repeating: "a", count: 64), token: alice).status == 404)
        #expect(try await server.request("GET", Endpoints.media + "/..%2Fchatd.sqlite", token: alice).status == 404)
        // Exactly at the limit is accepted.
        let ok = try await server.request("POST", Endpoints.media, token: alice, body: Data(count: 2048))
        #expect(ok.status == 201)
    }
}
