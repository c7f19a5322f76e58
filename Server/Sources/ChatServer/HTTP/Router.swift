import Foundation
import OfflineChatProtocol

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
/// `StoreError`s their status. The first route added that matches wins.
public struct Router: Sendable {
    /// false: the operator's paths (`isOperator`) answer 404 as if there were no such routes,
    /// and the admin key is ignored on the others (the public listener, when `--admin-listen`
    /// serves the operator elsewhere).
    var servesOperator = true

    /// The console (`/admin`), the admin API (`/v1/admin`) and `/metrics`.
    static func isOperator(_ path: PathSegments) -> Bool {
        guard path.count > 0 else { return false }
        let first = path.text(0)
        return first == "admin" || first == "metrics" || (first == "v1" && path.count > 1 && path.text(1) == "admin")
    }

    struct Route: Sendable {
        enum Segment: Sendable {
            /// Its UTF-8, compared byte for byte (a Kelvin sign is not a K).
            case literal([UInt8])
            /// `{name}`: any one segment, handed to the handler as `name`.
            case parameter(String)
        }

        let method: String
        let segments: [Segment]
        let handler: RouteHandler
        /// As added, which metrics count by.
        let pattern: String

        /// Whether `path`'s segments fit this route's (compared as bytes: no segment is built
        /// for a route that does not match).
        func matches(_ path: PathSegments) -> Bool {
            guard segments.count == path.count else { return false }
            for (index, segment) in segments.enumerated() {
                if case .literal(let bytes) = segment, !bytes.elementsEqual(path[index]) { return false }
            }
            return true
        }

        func parameters(in path: PathSegments) -> [String: String] {
            var parameters: [String: String] = [:]
            for (index, segment) in segments.enumerated() {
                if case .parameter(let name) = segment { parameters[name] = path.text(index) }
            }
            return parameters
        }
    }

    /// A path's UTF-8 and where each of its segments is in it, empty ones left out (`//` and a
    /// trailing `/` add none), split on the byte `/`. Bytes and offsets: the standard library's
    /// generic `split` of the path's UTF-8 view, and the views' `elementsEqual`, were a
    /// twentieth of a history read.
    struct PathSegments {
        private let bytes: [UInt8]
        private var ranges: [Range<Int>] = []

        init(_ path: String) {
            bytes = Array(path.utf8)
            var start = 0
            for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "/") {
                if start < index { ranges.append(start..<index) }
                start = index + 1
            }
            if start < bytes.count { ranges.append(start..<bytes.count) }
        }

        var count: Int { ranges.count }
        subscript(index: Int) -> ArraySlice<UInt8> { bytes[ranges[index]] }
        /// A segment as text (a few bytes: kept inline in the `String`, nothing allocated).
        func text(_ index: Int) -> String { String(decoding: self[index], as: UTF8.self) }
    }

    /// Where a route is looked up: its number of segments and its area, the text of its
    /// second segment (`conversations` in `/v1/conversations/{id}/messages`; the first for a
    /// one-segment path). A route whose area is a parameter is filed under nil.
    struct Key: Hashable {
        let count: Int
        let area: String?
    }

    /// The routes by `Key`, each list in the order added (with its place in that order). A
    /// path is compared only with the routes of its key and those filed under its count with
    /// no area: a list of every route scanned whole, each pattern compared by building a
    /// dictionary, was a tenth of a history read.
    private var routes: [Key: [(order: Int, route: Route)]] = [:]
    private var count = 0

    public init() {}

    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping RouteHandler) {
        let split = PathSegments(pattern)
        let texts = (0..<split.count).map(split.text)
        let segments = texts.map { text -> Route.Segment in
            text.hasPrefix("{") && text.hasSuffix("}")
                ? .parameter(String(text.dropFirst().dropLast())) : .literal(Array(text.utf8))
        }
        let route = Route(
            method: method, segments: segments, handler: handler, pattern: "/" + texts.joined(separator: "/"))
        var area: String?
        if !segments.isEmpty, case .literal = segments[min(1, segments.count - 1)] {
            area = texts[min(1, segments.count - 1)]
        }
        routes[Key(count: segments.count, area: area), default: []].append((count, route))
        count += 1
    }

    /// The routes a path of these segments may match, in the order added.
    func candidates(_ segments: PathSegments) -> [(order: Int, route: Route)] {
        let area = segments.count == 0 ? nil : segments.text(min(1, segments.count - 1))
        let named = area.flatMap { routes[Key(count: segments.count, area: $0)] } ?? []
        guard let anyArea = routes[Key(count: segments.count, area: nil)] else { return named }
        return (named + anyArea).sorted { $0.order < $1.order }
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse { routed(request).response }

    /// The answer and the pattern of the route that gave it (`unmatched` when none did), which
    /// metrics count by.
    func routed(_ request: HTTPRequest) -> (response: HTTPResponse, route: String) {
        let segments = PathSegments(request.path)
        var request = request
        if !servesOperator {
            if Self.isOperator(segments) { return (.error(.notFound("no endpoint at \(request.path)")), "unmatched") }
            // The key means nothing here (`/v1/health` tells its details only on the operator's listener).
            request.headers[Endpoints.adminKeyHeader.lowercased()] = nil
        }
        var pathMatched: Route?
        for (_, route) in candidates(segments) where route.matches(segments) {
            pathMatched = route
            guard route.method == request.method || (request.method == "HEAD" && route.method == "GET") else {
                continue
            }
            do {
                let context = RouteContext(request: request, parameters: route.parameters(in: segments))
                return (try route.handler(context), route.pattern)
            } catch let error as HTTPError where error.status == 500 {
                return (.error(.internalFailure(detail: error.body.message)), route.pattern)
            } catch let error as HTTPError {
                return (.error(error), route.pattern)
            } catch let error as StoreError where error.code == .internalError {
                return (.error(.internalFailure(detail: error.message)), route.pattern)
            } catch let error as StoreError {
                return (.error(HTTPError(error)), route.pattern)
            } catch {
                return (.error(.internalFailure(detail: "\(error)")), route.pattern)
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
}
