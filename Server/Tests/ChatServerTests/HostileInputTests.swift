import Foundation
import OfflineChatProtocol
import OfflineChatWebSocket
import Testing

/// Issue #14's attacks by one signed-in user, each at its size: they must fail to hurt anyone
/// else (loopback only, bounded loops).
@Suite(.serialized, .timeLimit(.minutes(2))) struct HostileInputTests {
    /// A send whose custom data is `depth` nested arrays, padded to about `size` bytes.
    static func nestedBody(depth: Int, size: Int) -> Data {
        let head =
            #"{"muid":"deep","receiver":"bob","receiverType":"user","category":"custom","type":"x","customData":"#
        let nest = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let padding = max(0, (size - head.utf8.count - nest.utf8.count - 20) / 2)
        return Data((head + "[" + nest + String(repeating: ",0", count: padding) + "]}").utf8)
    }

    /// Eight bodies of the size limit nested 400 deep (the review's attack stalled chatd for
    /// two minutes): each is refused, and another client is answered while they arrive.
    @Test func deeplyNestedBodiesAreRefusedWithoutStallingOthers() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let body = Self.nestedBody(depth: 400, size: 1 << 19)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask { try await server.request("POST", Endpoints.messages, token: alice, body: body).status }
            }
            let health = try await server.request("GET", "/v1/health")
            #expect(health.status == 200)
            for try await status in group { #expect(status == 422) }
        }
        let refused = try await server.request("POST", Endpoints.messages, token: alice, body: body)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("nests deeper than 33 levels"))
        // Nesting within the limit still reads (and custom data at the field's limit is stored).
        let allowed = try await server.request(
            "POST", Endpoints.messages, token: alice, body: Self.nestedBody(depth: 31, size: 4_096))
        #expect(allowed.status == 201, "\(String(decoding: allowed.body, as: UTF8.self))")
    }

    /// A realtime frame nested 400 deep closes the sender's socket with 1003; the frame is
    /// read as a typing frame only, and other users' realtime goes on.
    @Test func aDeeplyNestedRealtimeFrameClosesOnlyItsSocket() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let (attacker, _) = try server.realtime(alice)
        let (listener, _) = try server.realtime(bob)
        let deep = String(repeating: "[", count: 400) + String(repeating: "]", count: 400)
        let padding = String(repeating: " ", count: 60_000)
        try attacker.send(
            text: #"{"type":"typing","typing":{"receiver":"bob","isTyping":true,"x":"# + deep + padding + "}}")
        #expect(try Self.closing(attacker) == .close(.unsupportedData, "expected a typing envelope"))
        // A frame that is not a typing frame (a change, say) is refused the same way.
        let (second, _) = try server.realtime(alice)
        try second.send(
            text: #"{"type":"change","change":{"seq":1,"kind":"message.created","conversationId":"a","at":1}}"#)
        #expect(try Self.closing(second) == .close(.unsupportedData, "expected a typing envelope"))
        // Bob's socket still hears alice typing from a well-behaved socket.
        let (typist, _) = try server.realtime(alice)
        try typist.send(text: #"{"type":"typing","typing":{"receiver":"bob","isTyping":true}}"#)
        let heard = try listener.nextEnvelope()
        #expect(heard.type == .typing && heard.typing?.sender == "alice")
    }

    /// The close message a socket gets next (pings and pongs skipped).
    static func closing(_ socket: WebSocketClient) throws -> Message {
        while true {
            let message = try socket.receive()
            if case .close = message { return message }
            if case .text(let text) = message { throw LiveServer.Failure("expected a close, got \(text)") }
        }
    }
}

extension HostileInputTests {
    /// chatd's resident memory (`VmRSS`), or its high-water mark (`VmHWM`), in KiB.
    static func residentKilobytes(_ server: LiveServer, _ field: String = "VmRSS") -> Int {
        let status =
            (try? String(contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    /// 10,000 distinct filter combinations (every list length of categories and types, with
    /// and without replies and deleted messages): the review saw 28 MB grow to 512 MB, one
    /// compiled statement kept per combination. Lists are bound as one JSON array now, and
    /// the statement cache is bounded.
    @Test func tenThousandFilterCombinationsDoNotGrowTheServer() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        try await server.send("hello", from: alice, to: "bob")
        let path = "\(Endpoints.conversations)/alice~bob/messages?limit=1"
        func query(_ combination: Int) -> String {
            let categories = (0...(combination % 50)).map { "c\($0)" }.joined(separator: ",")
            let types = (0...(combination / 50 % 50)).map { "t\($0)" }.joined(separator: ",")
            return path + "&categories=\(categories)&types=\(types)&hideReplies=\(combination / 2_500 % 2 == 0)"
                + "&hideDeleted=\(combination / 5_000 % 2 == 0)"
        }
        for combination in 0..<100 {
            #expect(try await server.request("GET", query(combination), token: alice).status == 200)
        }
        let start = Self.residentKilobytes(server)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for combination in stride(from: worker, to: 10_000, by: 8) {
                        let status = try await server.request("GET", query(combination), token: alice).status
                        guard status == 200 else { throw LiveServer.Failure("combination \(combination): \(status)") }
                    }
                }
            }
            try await group.waitForAll()
        }
        let grown = Self.residentKilobytes(server) - start
        #expect(start > 0 && grown < 16 * 1024, "chatd grew by \(grown) KiB over 10,000 filter combinations")
    }
}

extension HostileInputTests {
    static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int) ?? -1
    }

    /// Any local account could read every bearer token: the data directory was 0755 and the
    /// database 0644. chatd makes them private on every start, old deployments included.
    @Test(.enabled(if: LiveServer.onSQLite)) func theDataDirectoryAndTheDatabaseArePrivate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let database = directory.appendingPathComponent("chatd.sqlite").path
        let first = try LiveServer(dataDirectory: directory)
        _ = try await first.user("alice")
        #expect(Self.mode(directory.path) == 0o700 && Self.mode(database) == 0o600)
        #expect(Self.mode(database + "-wal") == 0o600 && Self.mode(database + "-shm") == 0o600)
        first.stop()
        // An older chatd's modes are fixed on the next start.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: database)
        let second = try LiveServer(dataDirectory: directory)
        #expect(Self.mode(directory.path) == 0o700 && Self.mode(database) == 0o600)
        second.stop()
    }
}

extension HostileInputTests {
    /// Attachment urls are chatd's own media (or https with `--allow-https-media`): never a
    /// file on the reader's device, a script, or an address inside the reader's network.
    @Test(arguments: [false, true]) func attachmentsNameOnlyServerMedia(httpsAllowed: Bool) async throws {
        let server = try LiveServer(arguments: httpsAllowed ? ["--allow-https-media"] : [])
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        func send(_ url: String) async throws -> Int {
            let attachment = Attachment(url: url, name: "a.png", size: 1, mimeType: "image/png", extension: "png")
            return try await server.request(
                "POST", Endpoints.messages, token: alice,
                json: SendMessageRequest(
                    muid: UUID().uuidString, receiver: "bob", type: "image",
                    attachment: attachment)
            ).status
        }
        for hostile in [
            "file:///etc/passwd", "FILE:///etc/passwd", "javascript:alert(1)",
            "http://169.254.169.254/latest/meta-data",
            "/v1/media/../../etc/passwd", "/v1/media/ABC", "//evil.example/x.png", "https://"
        ] {
            #expect(try await send(hostile) == 422, "\(hostile)")
        }
        #expect(try await send("/v1/media/" + String(repeating: "0f", count: 32)) == 422, "no such upload")
        #expect(try await send(try await server.upload(Data("png".utf8), by: alice).url) == 201)
        #expect(try await send("https://cdn.example/a.png") == (httpsAllowed ? 201 : 422))
    }

    /// A text, custom or call message may carry an attachment too, and it is stored and shown
    /// like a media message's: the same rules hold for it.
    @Test func anyMessagesAttachmentIsChecked() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        func send(
            _ category: MessageCategory, _ type: String, _ attachment: OfflineChatProtocol.Attachment
        ) async throws -> Int {
            try await server.request(
                "POST", Endpoints.messages, token: alice,
                json: SendMessageRequest(
                    muid: UUID().uuidString, receiver: "bob", category: category, type: type, text: "look",
                    attachment: attachment, customData: .object(["k": .string("v")]))
            ).status
        }
        let own = try await server.upload(Data("png".utf8), by: alice)
        for (category, type) in [(MessageCategory.message, "text"), (.custom, "poll"), (.call, "audio")] {
            let hostile = OfflineChatProtocol.Attachment(
                url: "javascript:alert(1)", name: "a.png", size: 1, mimeType: "image/png", extension: "png")
            #expect(try await send(category, type, hostile) == 422, "\(category) \(type)")
            var unnamed = own
            unnamed.name = ""
            #expect(try await send(category, type, unnamed) == 422, "\(category) \(type): an empty name")
            #expect(try await send(category, type, own) == 201, "\(category) \(type): chatd's own media")
        }
    }
}

extension HostileInputTests {
    /// One token opening socket after socket: past `--max-sockets-per-user` each new one is
    /// closed with 1008 at once, the ones it holds keep working, and other users connect.
    @Test func aUsersRealtimeSocketsAreCapped() async throws {
        let server = try LiveServer(arguments: ["--max-sockets-per-user", "3"])
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        /// Another socket for alice, before its hello (which a refused one never gets).
        func connect() throws -> WebSocketClient {
            try WebSocketClient.connect(
                to: URL(string: "ws://127.0.0.1:\(server.port)\(Endpoints.realtime)")!,
                headers: ["Authorization": "Bearer \(alice)"])
        }
        var held: [WebSocketClient] = []
        for _ in 0..<3 { held.append(try server.realtime(alice).socket) }
        for _ in 0..<20 {
            let extra = try connect()
            #expect(try Self.closing(extra) == .close(.policyViolation, "too many realtime sockets for this user"))
        }
        let (listener, hello) = try server.realtime(bob)
        #expect(hello.type == .hello, "another user connects")
        try held[0].send(text: #"{"type":"typing","typing":{"receiver":"bob","isTyping":true}}"#)
        #expect(try listener.nextEnvelope().typing?.sender == "alice", "the held sockets still work")
        // A socket given back frees its place.
        held.removeLast().close()
        var reopened: (socket: WebSocketClient, hello: RealtimeEnvelope)?
        for _ in 0..<1_000 where reopened == nil {
            let attempt = try connect()
            if case .text = try attempt.receive() { reopened = (attempt, hello) } else { await Task.yield() }
        }
        #expect(reopened != nil)
    }
}

extension HostileInputTests {
    /// Realtime sockets leave the HTTP library once upgraded, so the node counts them itself:
    /// past `--max-connections` of them a new one is closed with 1013 (try again later), the
    /// ones held keep working, HTTP still answers, and a socket given back frees its place.
    @Test func aNodesRealtimeSocketsAreCapped() async throws {
        let server = try LiveServer(arguments: ["--max-connections", "8"])
        var tokens: [String] = []
        for index in 0..<9 { tokens.append(try await server.user("u\(index)")) }
        var held: [WebSocketClient] = []
        for token in tokens.prefix(8) { held.append(try server.realtime(token).socket) }
        for _ in 0..<5 {
            let extra = try WebSocketClient.connect(
                to: URL(string: "ws://127.0.0.1:\(server.port)\(Endpoints.realtime)")!,
                headers: ["Authorization": "Bearer \(tokens[8])"])
            #expect(try Self.closing(extra) == .close(.tryAgainLater, "this node is at its realtime sockets' limit"))
        }
        #expect(
            try await server.request("GET", "/v1/health").status == 200, "HTTP answers beside the full realtime side")
        try held[0].send(text: #"{"type":"typing","typing":{"receiver":"u1","isTyping":true}}"#)
        #expect(try held[1].nextEnvelope().typing?.sender == "u0", "the held sockets still work")
        held.removeLast().close()
        var reopened = false
        for _ in 0..<1_000 where !reopened {
            let attempt = try WebSocketClient.connect(
                to: URL(string: "ws://127.0.0.1:\(server.port)\(Endpoints.realtime)")!,
                headers: ["Authorization": "Bearer \(tokens[8])"])
            if case .text = try attempt.receive() { reopened = true } else { await Task.yield() }
        }
        #expect(reopened, "a socket given back frees its place")
    }
}

extension HostileInputTests {
    /// A raw TCP connection that sends `bytes` and then nothing.
    static func halfOpen(_ port: Int, sending bytes: String) throws -> Int32 {
        let fd = try Socket.connect(host: "127.0.0.1", port: port)
        try Socket.writeAll(fd, Array(bytes.utf8))
        return fd
    }

    /// Slowloris at its size: more half-sent request heads than chatd takes connections (150
    /// against 40, and 104 with the room the library keeps above that).
    /// Each new connection past the limit cuts the oldest of them, so a new client is served
    /// at once; and a head still unfinished after `--header-timeout` is cut anyway.
    @Test func halfSentRequestHeadsCannotHoldEveryConnection() async throws {
        let server = try LiveServer(arguments: ["--max-connections", "40", "--header-timeout", "1"])
        let alice = try await server.user("alice")
        let slow = try (0..<150).map { _ in
            try Self.halfOpen(server.port, sending: "GET /v1/health HTTP/1.1\r\nHost: x\r\n")
        }
        defer { for fd in slow { Socket.close(fd) } }
        #expect(try await server.request("GET", Endpoints.me, token: alice).status == 200, "a new client is served")
        // The oldest were cut to make room; the rest go once their head takes too long: each
        // sees its connection end (a read returns nothing) instead of waiting forever.
        for fd in slow {
            Socket.setTimeout(fd, seconds: 30)
            #expect(try Socket.readSome(fd).isEmpty, "cut")
        }
    }
}

extension HostileInputTests {
    /// The second review's probe at its size: connections that send a whole head, then hold
    /// their body back (a byte, then nothing), more of them than chatd takes. Each new client
    /// makes room by cutting the slowest body of a client with no credentials chatd knows, so
    /// it is served at once (before, a body counted as busy and held its connection for good:
    /// 20 of them kept /v1/health unanswered); and each held body is cut once nothing came for
    /// `--body-timeout` (a trickle below `--min-body-rate` goes the same way:
    /// `ConnectionGuardTests`).
    @Test func heldBackRequestBodiesCannotHoldEveryConnection() async throws {
        let server = try LiveServer(arguments: ["--max-connections", "20", "--body-timeout", "1"])
        let alice = try await server.user("alice")
        let head =
            "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
        let slow = try (0..<60).map { _ in try Self.halfOpen(server.port, sending: head) }
        defer { for fd in slow { Socket.close(fd) } }
        #expect(try await server.request("GET", Endpoints.health).status == 200, "a new client is served")
        #expect(try await server.request("GET", Endpoints.me, token: alice).status == 200)
        for fd in slow {
            Socket.setTimeout(fd, seconds: 30)
            #expect((try? Socket.readSome(fd).isEmpty) ?? true, "cut")
        }
    }

    /// A hundred sockets that never read, in a group that gets a message storm (16 MB to each,
    /// more than the kernel's buffers take): their backlogs are capped and the frames they share
    /// are shared, so chatd's peak stays small (with per-socket copies and a 4 MiB cap it rose by
    /// 431 MB here; now about 36 MB), and alice's own socket, which reads, is served all along.
    @Test func socketsThatNeverReadCannotGrowTheServer() async throws {
        let server = try LiveServer(arguments: ["--write-rate", "0"])  // the flood is the point here
        let alice = try await server.user("alice")
        try await server.group("g", by: alice)
        var silent: [WebSocketClient] = []
        for index in 0..<100 {
            let token = try await server.user("u\(index)")
            #expect(try await server.addMember("u\(index)", to: "g", by: alice) == 201)
            silent.append(try server.realtime(token).socket)  // and never read again
        }
        let reader = try server.realtime(alice).socket
        let start = Self.residentKilobytes(server)
        let text = String(repeating: "x", count: 20_000)
        for index in 0..<800 {  // 16 MB to each socket: more than the kernel buffers
            let reply = try await server.sendToGroup("\(index) \(text)", from: alice, to: "g")
            #expect(reply.status == 201)
            if index % 100 == 0 { _ = try reader.nextEnvelope() }  // alice's own socket keeps reading
        }
        let grown = Self.residentKilobytes(server, "VmHWM") - start
        #expect(grown < 100 * 1024, "chatd grew by \(grown) KiB with 100 sockets not reading")
        withExtendedLifetime(silent) {}
    }

    /// A NUL in a path cut the C string short (`/v1/users/alice%00x` answered alice) and an
    /// encoded `/` became a separator: both are 400 now; in a query value `%2F` is a `/` and
    /// `%252F` the text `%2F`, decoded once.
    @Test func encodedNulsAndSlashesInPathsAre400() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        for path in [
            "/v1/users/alice%00x", "/v1/users/al%2Fice", "/v1/users/al%2fice", "/v1/users?tags=a%00b",
            "/v1/users?tags=a%00b&tags=x"  // a NUL is refused even where a later repeat would win
        ] {
            let reply = try await server.request("GET", path, token: alice)
            #expect(reply.status == 400 && reply.error?.code == .invalidParameter, "\(path)")
        }
        #expect(try await server.request("GET", "/v1/users/ali%63e", token: alice).status == 200)
        _ = try await server.user("bob")
        try await server.send("a/b and %2F", from: alice, to: "bob")
        func found(_ query: String) async throws -> Int {
            try await server.request(
                "GET", "\(Endpoints.conversations)/alice~bob/messages?searchKeyword=\(query)", token: alice
            )
            .decode([MessagePayload].self).count
        }
        #expect(try await found("a%2Fb") == 1, "%2F in a query value is a /")
        #expect(try await found("%252F") == 1, "%252F is the text %2F")
        #expect(try await found("a%252Fb") == 0, "and is not decoded twice")
    }

    /// A name sent twice counts with its last value, and a request with hundreds of
    /// arguments is answered like any other (they are kept in order and searched by name only
    /// when a route asks for one).
    @Test func aRepeatedQueryArgumentCountsWithItsLastValue() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        for index in 0..<3 { try await server.send("\(index)", from: alice, to: "bob") }
        func count(_ query: String) async throws -> Int {
            let reply = try await server.request(
                "GET", "\(Endpoints.conversations)/alice~bob/messages?\(query)", token: alice)
            #expect(reply.status == 200, "\(query.prefix(40))")
            return try reply.decode([MessagePayload].self).count
        }
        #expect(try await count("limit=1&limit=2") == 2)
        #expect(try await count("limit=2&limit=1") == 1)
        #expect(try await count((0..<300).map { "a\($0)=" }.joined(separator: "&") + "&limit=1") == 1)
    }

    /// A JSON route takes JSON only: a body sent as another type is 415 and does nothing.
    @Test func jsonBodiesNeedAJSONContentType() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let body = try JSONEncoder().encode(SendMessageRequest(muid: "m", receiver: "bob", text: "hi"))
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
            let reply = try await server.request(
                "POST", Endpoints.messages, token: alice, body: body, headers: ["Content-Type": type])
            #expect(reply.status == 415 && reply.error?.code == .unsupportedMediaType, "\(type)")
        }
        #expect(
            try await server.request("GET", "\(Endpoints.conversations)/alice~bob/messages", token: alice).status
                == 404,
            "nothing was sent")
        let sent = try await server.request(
            "POST", Endpoints.messages, token: alice, body: body,
            headers: ["Content-Type": "application/json; charset=utf-8"])
        #expect(sent.status == 201)
    }
}
