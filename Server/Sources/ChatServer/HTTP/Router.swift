import ChatProtocol
import Foundation

/// What a handler gets: the request and the values of the pattern's `{name}` segments.
public struct RouteContext: Sendable {
    public var request: HTTPRequest
    public var parameters: [String: String]

    /// A path parameter the pattern guarantees.
    public func parameter(_ name: String) -> String { parameters[name] ?? "" }

    static let decoder = JSONDecoder()
    /// A body's nesting: the request object around a field of `Validate.maxJSONDepth` levels.
    static let maxBodyDepth = Validate.maxJSONDepth + 1

    /// Decodes the JSON body: 413 when too large, 415 when not sent as JSON, 400 when not
    /// UTF-8 JSON, 422 when the fields do not fit `T` (missing, wrong type).
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if request.bodyTooLarge { throw HTTPError(413, .payloadTooLarge, "the request body is too large") }
        let body = request.body
        if !body.isEmpty && !Self.isJSON(request.header("content-type")) {
            throw HTTPError(415, .unsupportedMediaType, "send the body as JSON with Content-Type: application/json")
        }
        guard String(validating: body, as: UTF8.self) != nil else {
            throw HTTPError(400, .malformedJSON, "the body is not valid UTF-8")
        }
        // One linear pass that refuses deep nesting before anything decodes it (nested
        // containers cost decoders far more than their size).
        var reader = JSONReader(body, maxDepth: Self.maxBodyDepth)
        do {
            try reader.skip()
            try reader.end()
        } catch let failure as JSONReader.Failure where failure.tooDeep {
            throw HTTPError.validation("the body nests deeper than \(Self.maxBodyDepth) levels")
        } catch {
            throw HTTPError(
                400, .malformedJSON, body.isEmpty ? "a JSON body is required" : "the body is not valid JSON")
        }
        do {
            return try Self.decoder.decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw HTTPError.validation(Self.describe(error))
        }
    }

    /// `decode(type)`, first trying `common`: a reader for the shape most bodies of this kind
    /// have, which answers nil for anything else (a body it reads must be one `JSONDecoder`
    /// reads the same). Every check of `decode` still applies to what `common` accepts.
    public func decode<T: Decodable>(_ type: T.Type, commonShape common: ([UInt8]) -> T?) throws -> T {
        let body = request.body
        if !request.bodyTooLarge, Self.isJSON(request.header("content-type")),
            String(validating: body, as: UTF8.self) != nil, let value = common(body)
        {
            return value
        }
        return try decode(type)
    }

    /// `application/json` or a `+json` type, with any parameters (`; charset=utf-8`).
    /// Read as bytes: every request with a body asks (Foundation's trimming was 2.5% of a send).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let essence = String(
            decoding: contentType.utf8.prefix { $0 != UInt8(ascii: ";") }.trimmingBlanks.map {
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0
            }, as: UTF8.self)
        return essence == "application/json" || (essence.hasPrefix("application/") && essence.hasSuffix("+json"))
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return keys.isEmpty ? "the body" : "`\(keys)`"
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = context.codingPath.isEmpty ? "" : " in \(path(context))"
            return "missing field `\(key.stringValue)`\(parent)"
        case .typeMismatch(let type, let context): return "\(path(context)) must be \(describe(type))"
        case .valueNotFound(let type, let context): return "\(path(context)) must be \(describe(type)), not null"
        case .dataCorrupted(let context): return "\(path(context)) has an invalid value"
        @unknown default: return "the body does not match the expected shape"
        }
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "a boolean"
        case is Double.Type: "a number"
        default: "a JSON \(type is [Any].Type ? "array" : "object")"
        }
    }

    /// A boolean query argument (`true`/`false`, `1`/`0`), false when absent; 400 otherwise.
    public func boolQuery(_ name: String) throws -> Bool {
        switch request.query[name] {
        case nil, "", "false", "0": return false
        case "true", "1": return true
        default: throw HTTPError.badParameter("`\(name)` must be true or false")
        }
    }

    /// An optional integer query argument within `range`; 400 otherwise.
    public func intQuery(_ name: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let raw = request.query[name], !raw.isEmpty else { return nil }
        guard let value = Int64(raw), range.contains(value) else {
            throw HTTPError.badParameter("`\(name)` must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }
}

public typealias RouteHandler = @Sendable (RouteContext) throws -> HTTPResponse

/// Matches method and path pattern (`/v1/messages/{id}`) to a handler.
/// Unknown paths answer 404, known paths with another method 405, thrown `HTTPError`s and
/// `StoreError`s their status.
public struct Router: Sendable {
    struct Route: Sendable {
        let method: String
        let segments: [String]
        let handler: RouteHandler
        var pattern: String { "/" + segments.joined(separator: "/") }
    }

    private var routes: [Route] = []

    public init() {}

    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping RouteHandler) {
        routes.append(Route(method: method, segments: Self.split(pattern), handler: handler))
    }

    static func split(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse { routed(request).response }

    /// The answer and the pattern of the route that gave it (`unmatched` when none did), which
    /// metrics count by.
    func routed(_ request: HTTPRequest) -> (response: HTTPResponse, route: String) {
        let segments = Self.split(request.path)
        var pathMatched: Route?
        for route in routes {
            guard let parameters = Self.match(route.segments, segments) else { continue }
            pathMatched = route
            guard route.method == request.method || (request.method == "HEAD" && route.method == "GET") else {
                continue
            }
            let pattern = route.pattern
            do {
                return (try route.handler(RouteContext(request: request, parameters: parameters)), pattern)
            } catch let error as HTTPError {
                return (.error(error), pattern)
            } catch let error as StoreError {
                return (.error(HTTPError(error)), pattern)
            } catch {
                return (.error(HTTPError(500, .internalError, "internal error: \(error)")), pattern)
            }
        }
        if let pathMatched {
            return (
                .error(HTTPError(405, .methodNotAllowed, "\(request.method) is not supported on \(request.path)")),
                pathMatched.pattern
            )
        }
        return (.error(.notFound("no endpoint at \(request.path)")), "unmatched")
    }

    static func match(_ pattern: [String], _ path: [String]) -> [String: String]? {
        guard pattern.count == path.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(pattern, path) {
            if expected.hasPrefix("{") && expected.hasSuffix("}") {
                parameters[String(expected.dropFirst().dropLast())] = actual
            } else if expected != actual {
                return nil
            }
        }
        return parameters
    }
}
