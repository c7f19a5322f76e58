// libFuzzer target: what chatd and the SDK decode from untrusted JSON and cursors (compiled
// with the ChatProtocol module's sources by scripts/fuzz.sh):
// - chatd: a request body is scanned by `JSONReader` (at most 33 levels) before it decodes
//   into the route's request type; realtime client frames are `RealtimeClientFrame`s;
//   changelog and list cursors are parsed.
// - the SDK: realtime frames decode as `RealtimeEnvelope`, changelog pages as `ChangelogPage`.
// The first byte picks the request type. Decoding errors are expected; crashes are findings.
import Foundation

private let decoder = JSONDecoder()

private func decodeRequest(_ selector: UInt8, _ body: Data) {
    switch selector % 14 {
    case 0: _ = try? decoder.decode(SendMessageRequest.self, from: body)
    case 1: _ = try? decoder.decode(EditMessageRequest.self, from: body)
    case 2: _ = try? decoder.decode(CreateGroupRequest.self, from: body)
    case 3: _ = try? decoder.decode(EditGroupRequest.self, from: body)
    case 4: _ = try? decoder.decode(JoinGroupRequest.self, from: body)
    case 5: _ = try? decoder.decode(AddMemberRequest.self, from: body)
    case 6: _ = try? decoder.decode(ReceiptRequest.self, from: body)
    case 7: _ = try? decoder.decode(AddReactionRequest.self, from: body)
    case 8: _ = try? decoder.decode(CreateUserRequest.self, from: body)
    case 9: _ = try? decoder.decode(CreateTokenRequest.self, from: body)
    case 10: _ = try? decoder.decode(RevokeTokenRequest.self, from: body)
    case 11: _ = try? decoder.decode(ChangeScopeRequest.self, from: body)
    case 12: _ = try? decoder.decode(TransferOwnershipRequest.self, from: body)
    default: _ = try? decoder.decode([String: JSONValue].self, from: body)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtocolJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    let body = Data(bytes.dropFirst())
    // chatd's path for a request body: the linear depth scan first, decoding only after it.
    var reader = JSONReader(Array(body), maxDepth: 33)
    if (try? reader.skip()) != nil, (try? reader.end()) != nil { decodeRequest(selector, body) }
    _ = try? RealtimeClientFrame(json: body)
    // The SDK's path for what a server sends.
    _ = try? decoder.decode(RealtimeEnvelope.self, from: body)
    _ = try? ChangelogPage(json: body)
    let text = String(decoding: body, as: UTF8.self)
    _ = ChangelogCursor.parse(text)
    _ = ConversationListCursor.parse(text)
    return 0
}
