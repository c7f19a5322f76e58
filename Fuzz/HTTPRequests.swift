import Foundation
// libFuzzer target: chatd's request handling below the store (compiled with chatd's HTTP
// files and an instrumented ChatProtocol by scripts/fuzz.sh): the escapes libmicrohttpd leaves
// (`HTTPRequest.KeptEscapes`), the router's path matching, query parsing (`intQuery`,
// `boolQuery`), the JSON body path (`RouteContext.decode`: content type, depth scan,
// request types) and a send's validation (`Validate.send`). An input is `METHOD\nPATH?QUERY\nCONTENT-TYPE\nBODY`. Any answer is fine;
// a crash is a finding.
import OfflineChatProtocol

private let router: Router = {
    var router = Router()
    router.add("POST", Endpoints.messages) { context in
        try Validate.send(try context.decode(SendMessageRequest.self), from: "alice")
        return .noContent
    }
    router.add("PATCH", Endpoints.messages + "/{id}") { context in
        _ = Int64(context.parameter("id"))
        _ = try context.decode(EditMessageRequest.self)
        return .noContent
    }
    router.add("GET", Endpoints.conversations + "/{id}/messages") { context in
        _ = try context.intQuery("limit", in: 1...100)
        _ = try context.intQuery("before", in: 1...Int64.max)
        _ = try context.boolQuery("unread")
        return .noContent
    }
    router.add("POST", Endpoints.groups) { context in
        _ = try context.decode(CreateGroupRequest.self)
        return .noContent
    }
    router.add("POST", Endpoints.groups + "/{guid}/join") { context in
        _ = try context.decode(JoinGroupRequest.self)
        return .noContent
    }
    return router
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequests(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let parts = UnsafeBufferPointer(start: data, count: size).split(
        separator: 10, maxSplits: 3, omittingEmptySubsequences: false)
    guard parts.count == 4 else { return 0 }
    let method = String(decoding: parts[0], as: UTF8.self)
    let target = String(decoding: parts[1], as: UTF8.self).split(
        separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    guard let path = HTTPRequest.KeptEscapes.path(String(target[0])) else { return 0 }
    var raw: [(String, String)] = []
    for pair in (target.count > 1 ? target[1] : "").split(separator: "&") {
        let field = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        raw.append((String(field[0]), field.count > 1 ? String(field[1]) : ""))
    }
    guard let query = HTTPRequest.KeptEscapes.query(raw) else { return 0 }
    let request = HTTPRequest(
        method: method, path: path, query: query,
        headers: ["content-type": String(decoding: parts[2], as: UTF8.self)], body: Array(parts[3]))
    _ = router.respond(to: request)
    return 0
}
