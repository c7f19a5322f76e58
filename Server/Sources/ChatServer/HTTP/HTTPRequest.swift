import Foundation

/// One HTTP request as chatd's router sees it.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The decoded path, without the query string.
    public var path: String
    /// Decoded query arguments (the last value wins for a repeated name).
    public var query: [String: String]
    /// Header fields by lowercased name.
    public var headers: [String: String]
    public var body: [UInt8]
    /// The body exceeded the server's limit; `body` holds only its start.
    public var bodyTooLarge: Bool = false

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
                body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The token of an `Authorization: Bearer …` header.
    public var bearerToken: String? {
        guard let value = header("authorization"), value.lowercased().hasPrefix("bearer ") else { return nil }
        let token = value.dropFirst(7).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}

