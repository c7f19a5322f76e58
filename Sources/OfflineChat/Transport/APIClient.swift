import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// chatd's HTTP API as one logged-in user. Every failure is a `ChatException`: no answer
/// at all is `ERROR_INTERNET_UNAVAILABLE`; a server error keeps chatd's code and status. A 401
/// from chatd is also reported to `rejection`, once, here, for every call path (the session
/// ends on it).
struct APIClient: Sendable {
    let baseURL: URL
    let token: String
    let transport: any HTTPTransport
    let rejection = AuthRejection()

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
    static let decoder = JSONDecoder()

    /// A 204 answer.
    struct NoContent: Decodable {}

    func get<T: Decodable>(_ path: String, query: [(String, String?)] = []) async throws -> T {
        try await send("GET", path, query: query, body: nil as String?)
    }

    /// A changelog page after `cursor` (nil: the head), read from the user's and their groups'
    /// logs: a `c3` cursor names every group the user is in, so it goes in the body of a
    /// `POST`, where no proxy's limit on a url's length applies.
    func changes(after cursor: String?, limit: Int) async throws -> ChangelogPage {
        try await send(
            "POST", Endpoints.changes, body: ChangesRequest(cursor: cursor ?? "", limit: limit, groupLogs: true))
    }

    func send<T: Decodable, Body: Encodable>(
        _ method: String, _ path: String, query: [(String, String?)] = [],
        body: Body?
    ) async throws -> T {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        let items = query.compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }
        if !items.isEmpty { components.queryItems = items }
        var headers = ["Authorization": "Bearer \(token)"]
        var data: Data?
        if let body {
            data = try Self.encoder.encode(body)
            headers["Content-Type"] = "application/json"
        }
        let (status, answer) = try await exchange(method, components.url!, headers: headers, body: data)
        if T.self == NoContent.self { return NoContent() as! T }
        do {
            if let readable = T.self as? any JSONReadable.Type { return try readable.init(json: answer) as! T }
            return try Self.decoder.decode(T.self, from: answer)
        } catch {
            throw ChatException(
                .unexpectedResponse, "cannot read the answer to \(method) \(path): \(error)",
                httpStatus: status)
        }
    }

    /// Uploads a file's bytes to chatd's media store; answers the attachment to send.
    /// A repeated upload stores no second file on chatd (the bytes are content-addressed);
    /// an upload no message names expires there.
    func upload(_ data: Data, name: String, mimeType: String) async throws -> Attachment {
        var components = URLComponents(
            url: baseURL.appendingPathComponent(Endpoints.media), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "name", value: name)]
        let headers = ["Authorization": "Bearer \(token)", "Content-Type": mimeType]
        let (status, answer) = try await exchange("POST", components.url!, headers: headers, body: data)
        do {
            return try Self.decoder.decode(Attachment.self, from: answer)
        } catch {
            throw ChatException(
                .unexpectedResponse, "cannot read the upload's answer: \(error)",
                httpStatus: status)
        }
    }

    /// A media url's bytes. chatd's own urls are paths on the server: they are resolved
    /// against it and carry the token; other urls are fetched as they are.
    /// Only http(s) urls; more than `maxBytes` is `ERROR_MEDIA_TOO_LARGE`.
    func download(_ url: String, maxBytes: Int64) async throws -> Data {
        guard let resolved = URL(string: url, relativeTo: baseURL)?.absoluteURL,
            ["http", "https"].contains(resolved.scheme?.lowercased())
        else {
            throw ChatException.invalid("not an http(s) url: \(url)")
        }
        let ours = resolved.host == baseURL.host && resolved.port == baseURL.port && resolved.scheme == baseURL.scheme
        return try await exchange(
            "GET", resolved, headers: ours ? ["Authorization": "Bearer \(token)"] : [:], body: nil,
            maxBytes: Int(clamping: maxBytes), fromChatd: ours
        ).1
    }

    /// One request; a non-2xx answer becomes the `ChatException` it stands for. A 401 from
    /// chatd (`fromChatd`: not a media url elsewhere) is reported to `rejection` first.
    private func exchange(
        _ method: String, _ url: URL, headers: [String: String], body: Data?,
        maxBytes: Int = HTTPTransports.maxAnswer, fromChatd: Bool = true
    ) async throws -> (Int, Data) {
        let reply = try await transport.send(method: method, url: url, headers: headers, body: body, maxBytes: maxBytes)
        let (status, answer) = (reply.status, reply.body)
        if status == 401 && fromChatd { rejection.report() }
        guard (200..<300).contains(status) else {
            if let apiError = try? Self.decoder.decode(APIError.self, from: answer) {
                throw ChatException(
                    apiError.code, apiError.message, httpStatus: status,
                    retryAfter: status == 429 || status == 503
                        ? reply.headers["retry-after"].flatMap(TimeInterval.init) : nil)
            }
            if status >= 500 {
                throw ChatException(.serverError, "HTTP \(status)", httpStatus: status)
            }
            throw ChatException(
                .unexpectedResponse, "HTTP \(status) from \(method) \(url.path)",
                httpStatus: status)
        }
        return (status, answer)
    }
}

extension ChatException {
    /// The token is no longer accepted: the session ends and the user's cache is wiped.
    var isAuthFailure: Bool { httpStatus == 401 }
    /// No answer, an unsecured one (retried a bounded number of times: see
    /// `secureConnectionFailed`), or a server-side failure a retry may fix.
    var isTransient: Bool {
        code == .internetUnavailable || code == .secureConnectionFailed || (httpStatus ?? 0) >= 500
    }
}
