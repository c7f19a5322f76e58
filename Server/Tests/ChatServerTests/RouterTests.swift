import Testing

@testable import ChatServer

/// Which route answers a request, and what it is handed.
@Suite struct RouterTests {
    /// A router whose handlers answer with their name and the parameters they were given.
    func router(_ routes: [(method: String, pattern: String)]) -> Router {
        var router = Router()
        for (method, pattern) in routes {
            router.add(method, pattern) { context in
                let parameters = context.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                return HTTPResponse(
                    status: 200, headers: [],
                    body: Array(([method, pattern] + parameters).joined(separator: " ").utf8))
            }
        }
        return router
    }

    func answer(_ router: Router, _ method: String, _ path: String) -> (status: Int, body: String, route: String) {
        let (response, route) = router.routed(HTTPRequest(method: method, path: path))
        return (response.status, String(decoding: response.body, as: UTF8.self), route)
    }

    @Test func aPathIsMatchedSegmentBySegmentAndItsParametersHandedOver() {
        let router = router([
            ("GET", "/v1/conversations"), ("GET", "/v1/conversations/{id}"),
            ("GET", "/v1/conversations/{id}/messages"), ("POST", "/v1/conversations/{id}/read"),
            ("DELETE", "/v1/messages/{id}/reactions/{reaction}")
        ])
        #expect(answer(router, "GET", "/v1/conversations").body == "GET /v1/conversations")
        #expect(answer(router, "GET", "/v1/conversations/u1~u2").body == "GET /v1/conversations/{id} id=u1~u2")
        let messages = answer(router, "GET", "/v1/conversations/g~team/messages")
        #expect(messages.body == "GET /v1/conversations/{id}/messages id=g~team")
        #expect(messages.route == "/v1/conversations/{id}/messages")
        #expect(
            answer(router, "DELETE", "/v1/messages/7/reactions/👍").body
                == "DELETE /v1/messages/{id}/reactions/{reaction} id=7 reaction=👍")
        #expect(answer(router, "POST", "/v1/conversations/x/read").body == "POST /v1/conversations/{id}/read id=x")
    }

    @Test func emptySegmentsCountForNothing() {
        let router = router([("GET", "/v1/conversations/{id}/messages")])
        #expect(answer(router, "GET", "//v1//conversations/a///messages/").body.hasSuffix("id=a"))
    }

    @Test func literalsMatchExactlyAndByWholeSegments() {
        let router = router([("GET", "/v1/conversations/{id}"), ("GET", "/v1/health")])
        for path in ["/v1/Health", "/v1/healthz", "/v1/healt", "/v2/health", "/v1/health/x", "/v1", "/", ""] {
            #expect(answer(router, "GET", path).status == 404, "\(path)")
            #expect(answer(router, "GET", path).route == "unmatched", "\(path)")
        }
        #expect(answer(router, "GET", "/v1/conversations/a/b").status == 404)
        let kelvin = self.router([("GET", "/v1/K")])
        #expect(answer(kelvin, "GET", "/v1/\u{212A}").status == 404, "a Kelvin sign is another byte sequence than K")
    }

    @Test func theFirstRouteAddedWins() {
        let router = router([("GET", "/v1/users/{uid}"), ("GET", "/v1/users/me"), ("GET", "/v1/users/{other}")])
        #expect(answer(router, "GET", "/v1/users/me").body == "GET /v1/users/{uid} uid=me")
        let literalFirst = self.router([("GET", "/v1/users/me"), ("GET", "/v1/users/{uid}")])
        #expect(answer(literalFirst, "GET", "/v1/users/me").body == "GET /v1/users/me")
        #expect(answer(literalFirst, "GET", "/v1/users/u1").body == "GET /v1/users/{uid} uid=u1")
    }

    @Test func aParameterWhereOthersHaveANameKeepsItsPlaceInTheOrder() {
        let anyFirst = router([("GET", "/v1/{area}"), ("GET", "/v1/health"), ("GET", "/{one}"), ("GET", "/metrics")])
        #expect(answer(anyFirst, "GET", "/v1/health").body == "GET /v1/{area} area=health")
        #expect(answer(anyFirst, "GET", "/metrics").body == "GET /{one} one=metrics")
        let namedFirst = router([("GET", "/v1/health"), ("GET", "/metrics"), ("GET", "/v1/{area}"), ("GET", "/{one}")])
        #expect(answer(namedFirst, "GET", "/v1/health").body == "GET /v1/health")
        #expect(answer(namedFirst, "GET", "/v1/users").body == "GET /v1/{area} area=users")
        #expect(answer(namedFirst, "GET", "/metrics").body == "GET /metrics")
        #expect(answer(namedFirst, "GET", "/other").body == "GET /{one} one=other")
        #expect(answer(router([("GET", "/")]), "GET", "/").body == "GET /")
    }

    @Test func aKnownPathWithAnotherMethodIs405AndHeadIsAGet() {
        let router = router([("GET", "/v1/messages/{id}"), ("PATCH", "/v1/messages/{id}"), ("POST", "/v1/messages")])
        let put = answer(router, "PUT", "/v1/messages/3")
        #expect(put.status == 405)
        #expect(put.body.contains("PUT is not supported on /v1/messages/3"))
        #expect(put.route == "/v1/messages/{id}")
        #expect(answer(router, "PATCH", "/v1/messages/3").body == "PATCH /v1/messages/{id} id=3")
        #expect(answer(router, "HEAD", "/v1/messages/3").body == "GET /v1/messages/{id} id=3")
        #expect(answer(router, "GET", "/v1/messages").status == 405)
    }

    @Test func whatAHandlerThrowsBecomesItsStatus() {
        var router = Router()
        router.add("GET", "/a") { _ in throw HTTPError.badParameter("no") }
        router.add("GET", "/b") { _ in throw StoreError(.unauthorized, "who?") }
        router.add("GET", "/c") { _ in throw CancellationError() }
        #expect(answer(router, "GET", "/a").status == 400)
        #expect(answer(router, "GET", "/b").status == 401)
        #expect(answer(router, "GET", "/c").status == 500)
        #expect(answer(router, "GET", "/c").route == "/c")
    }

    /// A failure inside a handler (a database's own message, say) reaches the client as a 500
    /// with a request id only; the detail is for the log.
    @Test func aFailureAnswersARequestIdNotItsDetail() {
        struct Leaky: Error {}
        var router = Router()
        router.add("GET", "/v1/a") { _ in throw StoreError.broken("relation \"secret_table\" does not exist") }
        router.add("GET", "/v1/b") { _ in throw Leaky() }
        for path in ["/v1/a", "/v1/b"] {
            let (response, _) = router.routed(HTTPRequest(method: "GET", path: path))
            let body = String(decoding: response.body, as: UTF8.self)
            let id = response.headers.first { $0.0 == "X-Request-Id" }?.1
            #expect(response.status == 500 && id != nil && body.contains(id ?? "-"), "\(body)")
            #expect(!body.contains("secret_table") && !body.contains("Leaky"), "\(body)")
        }
    }
}
