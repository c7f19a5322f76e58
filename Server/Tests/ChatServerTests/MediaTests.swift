import Foundation
import OfflineChatProtocol
import OfflineChatSQLite
import OfflineChatWebSocket
import Testing

@testable import ChatServer

@Suite struct MediaTests {
    @Test func anUploadAnswersAnAttachmentThatAnotherUserCanFetchAndSend() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let bytes = Data((0..<70_000).map { UInt8($0 % 251) })
        let upload = try await server.request(
            "POST", Endpoints.media + "?name=photo.jpg", token: alice, body: bytes,
            headers: ["Content-Type": "image/jpeg"])
        #expect(upload.status == 201)
        let attachment = try upload.decode(Attachment.self)
        #expect(attachment.name == "photo.jpg" && attachment.extension == "jpg" && attachment.mimeType == "image/jpeg")
        #expect(attachment.size == Int64(bytes.count) && attachment.url.hasPrefix(Endpoints.media + "/"))

        let message = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(muid: "m1", receiver: "bob", type: "image", attachment: attachment))
        #expect(message.status == 201)
        let fetched = try await server.request("GET", attachment.url, token: bob)
        #expect(fetched.status == 200 && fetched.body == bytes)
        #expect(fetched.headers["content-type"] == "image/jpeg")
    }

    /// An upload's attachment is one a send accepts, whatever its name's characters: the
    /// name at most 255 bytes (UTF-8) and the extension cut to 32 bytes on a character's edge.
    @Test func anUploadWithAMultiByteNameAnswersAnAttachmentASendAccepts() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        /// `text` with every byte but ASCII letters, digits and `.` percent-encoded.
        func escaped(_ text: String) -> String {
            text.utf8.map { byte in
                let ascii = Character(UnicodeScalar(byte))
                return byte < 0x80 && (ascii.isLetter || ascii.isNumber || ascii == ".")
                    ? String(ascii) : "%" + String(byte, radix: 16, uppercase: true)
            }.joined()
        }
        // The extension is 41 bytes: "a" and twenty "é"; at 32 bytes the sixteenth "é" straddles the cut.
        let name = String(repeating: "é", count: 100) + ".a" + String(repeating: "é", count: 20)  // 243 bytes
        let attachment = try await server.upload(Data("x".utf8), by: alice, name: escaped(name))
        #expect(attachment.name == name)
        #expect(attachment.extension == "a" + String(repeating: "é", count: 15), "31 bytes, whole characters")
        let sent = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(muid: "m1", receiver: "bob", type: "image", attachment: attachment))
        #expect(sent.status == 201)
        // 255 bytes is a name; 256 (128 "é", 128 characters) is not.
        let longest = String(repeating: "é", count: 127) + "a"
        #expect(try await server.upload(Data("y".utf8), by: alice, name: escaped(longest)).name == longest)
        let tooLong = try await server.request(
            "POST", Endpoints.media + "?name=" + escaped(String(repeating: "é", count: 128)), token: alice,
            body: Data("z".utf8))
        #expect(tooLong.status == 400)
    }

    /// Each upload is its own (url, content type), while the same bytes are stored once.
    @Test func uploadsOfTheSameBytesShareOneFileAndKeepTheirOwnContentType() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let mallory = try await server.user("mallory")
        let bytes = Data("<script>alert(1)</script>".utf8)
        let png = try await server.upload(bytes, by: alice)
        let html = try await server.upload(bytes, by: mallory, contentType: "text/html")
        #expect(png.url != html.url && png.name == "file")
        let stored = try FileManager.default.contentsOfDirectory(
            atPath: server.dataDirectory.appendingPathComponent("media").path)
        #expect(stored.count == 1)
        let fetched = try await server.request("GET", png.url, token: alice)
        #expect(
            fetched.status == 200 && fetched.headers["content-type"] == "image/png",
            "the first upload's type no longer wins")
        #expect(fetched.headers["x-content-type-options"] == "nosniff")
        #expect(fetched.headers["content-security-policy"]?.contains("sandbox") == true)
        #expect(try await server.request("GET", html.url, token: mallory).headers["content-type"] == "text/html")
    }

    /// Media is served to its uploader and to whoever can read a message naming it; a
    /// kick, a block or the message's deletion ends that, and nobody learns which files exist.
    @Test func mediaIsServedOnlyToTheUploaderAndToReadersOfAMessageNamingIt() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        func upload(_ text: String) async throws -> OfflineChatProtocol.Attachment {
            try await server.upload(Data(text.utf8), by: alice)
        }
        func status(_ attachment: OfflineChatProtocol.Attachment, _ token: String) async throws -> Int {
            try await server.request("GET", attachment.url, token: token).status
        }
        func send(
            _ attachment: OfflineChatProtocol.Attachment, from token: String, to receiver: String,
            _ type: ReceiverType = .user
        ) async throws -> Reply {
            try await server.request(
                "POST", Endpoints.messages, token: token,
                json: SendMessageRequest(
                    muid: UUID().uuidString, receiver: receiver, receiverType: type, type: "image",
                    attachment: attachment))
        }
        let direct = try await upload("direct")
        #expect(try await status(direct, alice) == 200)
        #expect(try await status(direct, bob) == 404, "not sent to bob yet")
        let sent = try await send(direct, from: alice, to: "bob").decode(MessagePayload.self)
        #expect(try await status(direct, bob) == 200)
        #expect(try await status(direct, carol) == 404, "carol reads no message naming it")
        // Bob may forward what he can read; carol may not send a url she cannot read.
        let forwarded = try await upload("forwarded")
        #expect(try await send(forwarded, from: alice, to: "bob").status == 201)
        #expect(try await send(forwarded, from: bob, to: "carol").status == 201)
        #expect(try await status(forwarded, carol) == 200)
        let other = try await upload("other")
        let stolen = try await send(other, from: carol, to: "bob")
        #expect(stolen.status == 422 && stolen.error?.code == .validationFailed)

        try await server.group("g", by: alice)
        #expect(try await server.addMember("bob", to: "g", by: alice) == 201)
        let inGroup = try await upload("group")
        #expect(try await send(inGroup, from: alice, to: "g", ReceiverType.group).status == 201)
        #expect(try await status(inGroup, bob) == 200)
        _ = try await server.request("DELETE", "\(Endpoints.groups)/g/members/bob", token: alice)
        #expect(try await status(inGroup, bob) == 404, "kicked: the group's media goes with its messages")

        _ = try await server.request("PUT", "\(Endpoints.blocks)/bob", token: alice)
        #expect(try await status(direct, bob) == 404, "a block between them ends bob's access to alice's media")
        #expect(try await status(direct, alice) == 200)
        _ = try await server.request("DELETE", "\(Endpoints.blocks)/bob", token: alice)
        #expect(try await status(direct, bob) == 200)
        #expect(try await server.request("DELETE", "\(Endpoints.messages)/\(sent.id)", token: alice).status == 200)
        #expect(try await status(direct, bob) == 404, "deleted: no message names it for bob any more")
    }

    /// An upload no message names is removed after the grace period, and its file once no
    /// other upload shares it; a named one stays.
    @Test func unreferencedUploadsAndTheirFilesAreRemovedAfterTheGrace() async throws {
        let server = try LiveServer(arguments: ["--test-clock", "--media-grace", "3600"])
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        func upload(_ text: String) async throws -> OfflineChatProtocol.Attachment {
            try await server.upload(Data(text.utf8), by: alice)
        }
        let orphan = try await upload("never sent")
        let named = try await upload("sent")
        let deleted = try await upload("sent, then deleted")
        _ = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(
                muid: "m1", receiver: "bob", type: "file", attachment: named))
        let message = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(
                muid: "m2", receiver: "bob", type: "file", attachment: deleted)
        ).decode(MessagePayload.self)
        _ = try await server.request("DELETE", "\(Endpoints.messages)/\(message.id)", token: alice)
        let mediaDirectory = server.dataDirectory.appendingPathComponent("media").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: mediaDirectory).count == 3)

        try await server.advanceClock(seconds: 1800)
        _ = try await upload("a later one")  // sweeps: nothing is old enough yet
        #expect(try await server.request("GET", orphan.url, token: alice).status == 200)
        try await server.advanceClock(seconds: 3000)
        let latest = try await upload("sweeps again")
        #expect(try await server.request("GET", orphan.url, token: alice).status == 404)
        #expect(try await server.request("GET", deleted.url, token: alice).status == 404)
        #expect(try await server.request("GET", named.url, token: alice).status == 200)
        #expect(try await server.request("GET", latest.url, token: alice).status == 200)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: mediaDirectory).count == 3,
            "sent, a later one, sweeps again")
        #expect(try await server.request("GET", orphan.url, token: alice).status == 404)
    }

    /// A file torn by a crash (an older chatd renamed without syncing) is never served, and
    /// the next upload of the right bytes writes it again.
    @Test func aTornFileIsNotServedAndARightUploadRewritesIt() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bytes = Data((0..<50_000).map { UInt8($0 % 253) })
        let attachment = try await server.request("POST", Endpoints.media, token: alice, body: bytes).decode(
            Attachment.self)
        server.stop()
        let media = server.dataDirectory.appendingPathComponent("media")
        let file = media.appendingPathComponent(
            try #require(try FileManager.default.contentsOfDirectory(atPath: media.path).first))
        try bytes.prefix(10_000).write(to: file)  // torn
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        let alice2 = try await restarted.token("alice")
        #expect(
            try await restarted.request("GET", attachment.url, token: alice2).status == 404,
            "the torn bytes are never served")
        _ = try await restarted.request("POST", Endpoints.media, token: alice2, body: bytes).decode(Attachment.self)
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
        let slash = try await server.request(
            "POST", Endpoints.media + "?name=a%2Fb", token: alice, body: Data("x".utf8))
        #expect(slash.status == 400)
        let badType = try await server.request(
            "POST", Endpoints.media, token: alice, body: Data("x".utf8), headers: ["Content-Type": "nonsense"])
        #expect(badType.status == 400)
        #expect(
            try await server.request("GET", Endpoints.media + "/" + String(repeating: "a", count: 64), token: alice)
                .status == 404)
        #expect(try await server.request("GET", Endpoints.media + "/..%2Fchatd.sqlite", token: alice).status == 400)
        // Exactly at the limit is accepted.
        let ok = try await server.request("POST", Endpoints.media, token: alice, body: Data(count: 2048))
        #expect(ok.status == 201)
    }

    /// Media messages sent before uploads had owners keep working: their `/v1/media/<sha-256>`
    /// url becomes an upload of the message's sender, served to the conversation's readers.
    @Test(.enabled(if: LiveServer.onSQLite)) func mediaSentBeforeUploadsHadOwnersStaysReadableByItsConversation()
        async throws
    {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        _ = try await server.user("carol")
        let bytes = Data("an old photo".utf8)
        let attachment = try await server.upload(bytes, by: alice)
        _ = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(
                muid: "old", receiver: "bob", type: "image", attachment: attachment))
        server.stop()
        // As schema 10 kept it: the url named the file's hash, and there were no upload rows.
        let file = MediaStore.sha256Hex(Array(bytes))
        var old = attachment
        old.url = Endpoints.media + "/" + file
        let db = try Connection(path: server.dataDirectory.appendingPathComponent("chatd.sqlite").path)
        try db.run(
            "UPDATE messages SET attachment = ?", [String(decoding: try JSONEncoder().encode(old), as: UTF8.self)])
        try OldSchema.rewind(db, to: 10)
        try db.close()
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        let fetched = try await restarted.request("GET", old.url, token: try await restarted.token("bob"))
        #expect(fetched.status == 200 && fetched.body == bytes && fetched.headers["content-type"] == "image/png")
        #expect(try await restarted.request("GET", old.url, token: try await restarted.token("carol")).status == 404)
    }
}

extension MediaTests {
    /// The second review's probe: 40 GETs of a 16 MiB file whose clients never read held
    /// 685 MB, each answer copied whole into memory. Now a download is read from the file as
    /// its client takes it, and each user has 4 at once at most (the next is 429 until one ends).
    @Test func downloadsAreStreamedAndEachUserHasAFewAtOnce() async throws {
        let server = try LiveServer(arguments: ["--write-rate", "0"])
        let alice = try await server.user("alice")
        try await server.group("photos", by: alice)
        let bytes = Data((0..<(16 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let attachment = try await server.upload(bytes, by: alice, contentType: "image/jpeg")
        let sent = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(
                muid: "m", receiver: "photos", receiverType: .group, type: "image", attachment: attachment))
        #expect(sent.status == 201)
        var readers: [String] = []
        for index in 0..<10 {
            readers.append(try await server.user("r\(index)"))
            #expect(try await server.addMember("r\(index)", to: "photos", by: alice) == 201)
        }
        #expect(try await server.request("GET", attachment.url, token: readers[0]).body == bytes, "whole, in order")
        let start = HostileInputTests.residentKilobytes(server)
        func stalled(_ token: String) throws -> (fd: Int32, head: String) {
            let fd = try Socket.connect(host: "127.0.0.1", port: server.port)
            try Socket.writeAll(
                fd, Array("GET \(attachment.url) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8))
            Socket.setTimeout(fd, seconds: 10)
            return (fd, String(decoding: try Socket.readSome(fd, max: 512), as: UTF8.self))  // then never again
        }
        var held: [Int32] = []
        defer { for fd in held { Socket.close(fd) } }
        for token in readers {
            for _ in 0..<4 {
                let (fd, head) = try stalled(token)
                held.append(fd)
                #expect(head.hasPrefix("HTTP/1.1 200"))
            }
        }
        let grown = HostileInputTests.residentKilobytes(server) - start
        #expect(grown < 100 * 1024, "chatd grew by \(grown) KiB for 40 stalled 16 MiB downloads")
        let fifth = try stalled(readers[0])
        held.append(fifth.fd)
        #expect(fifth.head.hasPrefix("HTTP/1.1 429"), "\(fifth.head.prefix(40))")
        Socket.close(held.removeFirst())  // one of r0's ends: a slot comes back
        var again = 0
        for _ in 0..<20_000 where again != 200 {  // a 429 takes well under a millisecond
            again = try await server.request("GET", attachment.url, token: readers[0]).status
        }
        #expect(again == 200)
    }
}

extension MediaTests {
    /// Twenty uploads of different bytes at once against a quota that holds five: five are
    /// kept, on either engine (on PostgreSQL each locked only its own file and saw the others'
    /// sizes missing, so they went up to twice over the quota).
    @Test func concurrentUploadsStayWithinTheQuota() async throws {
        let server = try LiveServer(arguments: ["--media-quota", "10000", "--upload-rate", "0"])
        let alice = try await server.user("alice")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try await server.request(
                        "POST", Endpoints.media, token: alice, body: Data(repeating: UInt8(index), count: 2000),
                        headers: ["Content-Type": "image/png"]
                    ).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 201 }.count == 5 && statuses.filter { $0 == 403 }.count == 15, "\(statuses)")
    }
}
