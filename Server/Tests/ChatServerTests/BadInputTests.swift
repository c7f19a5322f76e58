import Foundation
import OfflineChatProtocol
import Testing

/// Client mistakes get a 4xx with a JSON `{code, message}` body, never a 5xx. The tables run
/// on chatd's router in the test process (`InProcessServer`); the body limit needs the wire.
@Suite struct BadInputTests {
    func expectError(
        _ reply: Reply, _ status: Int, _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            reply.status == status, "\(String(decoding: reply.body, as: UTF8.self))", sourceLocation: sourceLocation)
        #expect(reply.error?.code == code, sourceLocation: sourceLocation)
        #expect(reply.headers["content-type"] == "application/json", sourceLocation: sourceLocation)
    }

    @Test func malformedBodiesAre400AndWrongShapesAre422() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let send = { (body: [UInt8]) in
            try await server.request("POST", Endpoints.messages, token: alice, body: Data(body))
        }
        expectError(try await send(Array("{\"muid\":".utf8)), 400, .malformedJSON)
        expectError(try await send([]), 400, .malformedJSON)
        expectError(try await send([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x7D]), 400, .malformedJSON)  // {"\xFF\xFE"}
        expectError(try await send(Array("[1,2]".utf8)), 422, .validationFailed)
        expectError(try await send(Array(#"{"muid":1,"receiver":"bob"}"#.utf8)), 422, .validationFailed)
        expectError(
            try await send(
                Array(#"{"muid":"x","receiver":"bob","receiverType":"planet","category":"message","type":"text"}"#.utf8)
            ),
            422, .validationFailed)
        expectError(try await send(Array(#"{"receiver":"bob"}"#.utf8)), 422, .validationFailed)
        let receipt = try await server.request(
            "POST", "\(Endpoints.conversations)/alice~bob/read", token: alice,
            body: Data(#"{"messageId":1e30}"#.utf8))
        #expect(receipt.status == 422 || receipt.status == 404)
    }

    /// `?tags=`, `?roles=` and `?types=` list values separated by commas: a tag, a role or a
    /// message type with a comma in it (or an empty role) could never be named by a filter,
    /// so it is refused where it is written. A user holds at most 50 tags, as a group does.
    @Test func valuesNoFilterCouldNameAreRefused() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        func createUser(_ request: CreateUserRequest) async throws -> Reply {
            try await server.request("POST", Endpoints.adminUsers, admin: true, json: request)
        }
        for request in [
            CreateUserRequest(uid: "c1", tags: ["sales,emea"]), CreateUserRequest(uid: "c2", role: "a,b"),
            CreateUserRequest(uid: "c3", role: ""),
            CreateUserRequest(uid: "c4", tags: (0...50).map { "t\($0)" })
        ] {
            expectError(try await createUser(request), 422, .validationFailed)
        }
        #expect(try await createUser(CreateUserRequest(uid: "c5", tags: ["sales", "emea"], role: "lead")).status == 201)
        expectError(
            try await server.request(
                "POST", Endpoints.groups, token: alice, json: CreateGroupRequest(guid: "g1", name: "G", tags: ["x,y"])),
            422, .validationFailed)
        #expect(
            try await server.request(
                "POST", Endpoints.groups, token: alice, json: CreateGroupRequest(guid: "g2", name: "G")
            )
            .status == 201)
        expectError(
            try await server.request(
                "PATCH", Endpoints.groups + "/g2", token: alice, json: EditGroupRequest(tags: ["x,y"])),
            422, .validationFailed)
        expectError(
            try await server.request(
                "POST", Endpoints.messages, token: alice,
                json: SendMessageRequest(
                    muid: "m1", receiver: "bob", category: .custom, type: "poll,quiz", customData: .bool(true))),
            422, .validationFailed)
    }

    @Test func oversizedBodiesAre413() async throws {
        let server = try LiveServer(arguments: ["--max-body", "2048"])
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let big = SendMessageRequest(muid: "big", receiver: "bob", text: String(repeating: "x", count: 5000))
        expectError(
            try await server.request("POST", Endpoints.messages, token: alice, json: big), 413, .payloadTooLarge)
        // The server is fine afterwards.
        #expect(try await server.request("GET", Endpoints.health).status == 200)
    }

    @Test func outOfRangeLimitsAndBadCursorsAre400() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        for query in ["limit=0", "limit=101", "limit=-1", "limit=abc", "limit=99999999999999999999"] {
            expectError(
                try await server.request("GET", Endpoints.conversations + "?" + query, token: alice), 400,
                .invalidParameter)
        }
        expectError(
            try await server.request("GET", Endpoints.changes + "?cursor=c1.0&limit=1001", token: alice), 400,
            .invalidParameter)
        expectError(
            try await server.request("GET", Endpoints.changes + "?cursor=garbage", token: alice), 400, .invalidCursor)
        let ahead = try await server.beginning(alice).replacingOccurrences(of: ".0.", with: ".999.")
        expectError(
            try await server.request("GET", Endpoints.changes + "?cursor=\(ahead)", token: alice), 400, .invalidCursor)
        expectError(
            try await server.request("GET", Endpoints.changes + "?cursor=c2.1.0", token: alice), 410, .cursorExpired)
        expectError(
            try await server.request("GET", Endpoints.conversations + "?cursor=nope", token: alice), 400,
            .invalidParameter)
    }

    @Test func unknownPathsAre404AndWrongMethods405() async throws {
        let server = try InProcessServer()
        expectError(try await server.request("GET", "/v1/nothing"), 404, .notFound)
        expectError(try await server.request("GET", "/"), 404, .notFound)
        expectError(try await server.request("PUT", Endpoints.health), 405, .methodNotAllowed)
        expectError(try await server.request("DELETE", Endpoints.messages), 405, .methodNotAllowed)
    }

    @Test func aPlainGETOnTheRealtimeEndpointExplainsItself() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        expectError(try await server.request("GET", Endpoints.realtime, token: alice), 400, .invalidParameter)
        expectError(try await server.request("GET", Endpoints.realtime), 401, .unauthorized)
    }
}

@Suite struct NestingTests {
    func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    /// Foundation decodes ~512 levels but cannot encode them back: without a cap, one such
    /// message made every later conversation list answer 500.
    @Test func deeplyNestedCustomDataIsRefusedAndReadsKeepWorking() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let deep = [("customData", nested(508)), ("metadata", "{\"k\":\(nested(508))}")]
        for (field, value) in deep {
            let data = field == "customData" ? value : "1"
            let extra = field == "metadata" ? #","metadata":\#(value)"# : ""
            let body =
                #"{"muid":"deep-\#(field)","receiver":"bob","receiverType":"user","category":"custom","type":"x","customData":\#(data)\#(extra)}"#
            let reply = try await server.request("POST", Endpoints.messages, token: alice, body: Data(body.utf8))
            #expect(reply.status == 422, "\(field): \(reply.status)")
        }
        let user = #"{"uid":"deep","metadata":{"k":\#(nested(508))}}"#
        #expect(
            try await server.request("POST", Endpoints.adminUsers, admin: true, body: Data(user.utf8)).status == 422)
        let fine =
            #"{"muid":"ok","receiver":"bob","receiverType":"user","category":"custom","type":"x","customData":\#(nested(30))}"#
        #expect(try await server.request("POST", Endpoints.messages, token: alice, body: Data(fine.utf8)).status == 201)
        #expect(try await server.request("GET", Endpoints.conversations, token: alice).status == 200)
    }
}
