import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// chatd's HTTP API as one logged-in user. Every failure is a `ChatException`: no answer
/// at all is `ERROR_INTERNET_UNAVAILABLE`; a server error keeps chatd's code and status.
struct APIClient: Sendable {
    let baseURL: URL
    let token: String
    let transport: any HTTPTransport

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

    func send<T: Decodable, Body: Encodable>(_ method: String, _ path: String, query: [(String, String?)] = [],
                                             body: Body?) async throws -> T {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        let items = query.compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }
        if !items.isEmpty { components.queryItems = items }
        var headers = ["Authorization": "Bearer \(token)"]
        var data: Data?
        if let body {
            data = try Self.encoder.encode(body)
            headers["Content-Type"] = "application/json"
        }
        let (status, answer) = try await transport.send(method: method, url: components.url!, headers: headers, body: data)
        guard (200..<300).contains(status) else {
            if let apiError = try? Self.decoder.decode(APIError.self, from: answer) {
                throw ChatException(errorCode: apiError.code.rawValue, errorDescription: apiError.message, httpStatus: status)
            }
            if status >= 500 {
                throw ChatException(errorCode: "server_error", errorDescription: "HTTP \(status)", httpStatus: status)
            }
            throw ChatException(errorCode: ChatException.unexpectedResponse, errorDescription: "HTTP \(status) without an error body",
                                httpStatus: status)
        }
        if T.self == NoContent.self { return NoContent() as! T }
        do {
            return try Self.decoder.decode(T.self, from: answer)
        } catch {
            throw ChatException(errorCode: ChatException.unexpectedResponse, errorDescription: "cannot read the answer to \(method) \(path): \(error)",
                                httpStatus: status)
        }
    }

    /// Any URL's bytes (media downloads).
    func download(_ url: URL) async throws -> Data {
        let (status, data) = try await transport.send(method: "GET", url: url, headers: [:], body: nil)
        guard (200..<300).contains(status) else {
            throw ChatException(errorCode: ChatException.unexpectedResponse, errorDescription: "HTTP \(status) for \(url)", httpStatus: status)
        }
        return data
    }
}

extension ChatException {
    /// The token is no longer accepted: the session ends and the user's cache is wiped.
    var isAuthFailure: Bool { httpStatus == 401 }
    /// No answer, or a server-side failure a retry may fix.
    var isTransient: Bool { errorCode == Self.internetUnavailable || (httpStatus ?? 0) >= 500 }
}
