import Testing

@testable import ChatServer

/// What chatd reads from a request's headers before any route runs.
@Suite struct HTTPRequestTests {
    func token(_ authorization: String?) -> String? {
        let headers = authorization.map { ["authorization": $0] } ?? [:]
        return HTTPRequest(method: "GET", path: "/", query: [:], headers: headers, body: []).bearerToken
    }

    @Test func theBearerTokenIsTakenInAnyCaseWithoutTheBlanksAroundIt() {
        #expect(token("Bearer abc.def") == "abc.def")
        #expect(token("bearer abc") == "abc")
        #expect(token("BEARER abc") == "abc")
        #expect(token("BeArEr \t abc \t ") == "abc")
        #expect(token("Bearer a b") == "a b", "inner blanks are the token's (it then matches no token)")
    }

    @Test func queryArgumentsAreFoundByNameInTheOrderSentTheLastRepeatWinning() {
        var query: QueryArguments = ["limit": "1"]
        query.add("before", "9")
        query.add("limit", "2")
        #expect(query["limit"] == "2")
        #expect(query["before"] == "9")
        #expect(query["after"] == nil && query["Limit"] == nil)
        #expect(query.all.map(\.name) == ["limit", "before", "limit"])
        #expect(QueryArguments(["a": "b"])["a"] == "b" && QueryArguments().isEmpty)
    }

    @Test func anythingElseHasNoBearerToken() {
        for header in [
            nil, "", "Bearer", "Bearer ", "Bearer  \t ", "Bearerabc", "Basic abc", "Bearer\tabc", "Bearer\u{0}abc",
            "Béarer abc", "xBearer abc"
        ] {
            #expect(token(header) == nil, "\(String(describing: header))")
        }
    }

    @Test func aJSONBodyIsJSONOrAPlusJSONTypeInAnyCaseWithParameters() {
        for type in [
            "application/json", "application/json; charset=utf-8", " Application/JSON ;charset=UTF-8",
            "\tapplication/json\t", "application/problem+json", "APPLICATION/VND.API+JSON; x=y"
        ] {
            #expect(RouteContext.isJSON(type), "\(type)")
        }
        for type in [nil, "", "text/plain", "application/jsonx", "text/json", "application/json-patch", "+json", "json"]
        {
            #expect(!RouteContext.isJSON(type), "\(String(describing: type))")
        }
    }
}
