import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// chatd's HTTP API as one logged-in user. Every failure is a `ChatException`: no answer
/// at all is `ERROR_INTERNET_UNAVAILABLE`; a server error keeps chatd's code and status.
struct APIClient: Sendable {
    let baseURL: URL
    let token: String
    let session: URLSession

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
        var request = URLRequest(url: components.url!)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = try Self.encoder.encode(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw ChatException.offline((error as? URLError).map { "\($0.code.rawValue)" } ?? "\(error)")
        }
        guard let http = response as? HTTPURLResponse else { throw ChatException.offline("no HTTP response") }
        guard (200..<300).contains(http.statusCode) else {
            if let apiError = try? Self.decoder.decode(APIError.self, from: data) {
                throw ChatException(errorCode: apiError.code.rawValue, errorDescription: apiError.message, httpStatus: http.statusCode)
            }
            if http.statusCode >= 500 || http.statusCode == 0 {
                throw ChatException(errorCode: "server_error", errorDescription: "HTTP \(http.statusCode)", httpStatus: http.statusCode)
            }
            throw ChatException(errorCode: ChatException.unexpectedResponse, errorDescription: "HTTP \(http.statusCode) without an error body",
                                httpStatus: http.statusCode)
        }
        if T.self == NoContent.self { return NoContent() as! T }
        do {
            return try Self.decoder.decode(T.self, from: data)
        } catch {
            throw ChatException(errorCode: ChatException.unexpectedResponse, errorDescription: "cannot read the answer to \(method) \(path): \(error)",
                                httpStatus: http.statusCode)
        }
    }

    static func session(timeout: TimeInterval) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = 8
        return URLSession(configuration: configuration)
    }
}

extension ChatException {
    /// The token is no longer accepted: the session ends and the user's cache is wiped.
    var isAuthFailure: Bool { httpStatus == 401 }
    /// No answer, or a server-side failure a retry may fix.
    var isTransient: Bool { errorCode == Self.internetUnavailable || (httpStatus ?? 0) >= 500 }
}
