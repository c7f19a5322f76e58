import Foundation

/// One HTTP request as chatd's router sees it.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The decoded path, without the query string.
    public var path: String
    /// Decoded query arguments (the last value wins for a repeated name).
    public var query: QueryArguments
    /// Header fields by lowercased name.
    public var headers: [String: String]
    public var body: [UInt8]
    /// The body exceeded the server's limit; `body` holds only its start.
    public var bodyTooLarge: Bool = false

    public init(
        method: String, path: String, query: QueryArguments = [:], headers: [String: String] = [:],
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The token of an `Authorization: Bearer …` header (the scheme in any case, the token
    /// without the spaces and tabs around it). Read from the header's own UTF-8 by offset:
    /// every signed-in request asks (Foundation's `lowercased` and `trimmingCharacters` were 3%
    /// of a send's CPU, and generic walks of the string's views a fiftieth of a history read).
    public var bearerToken: String? { headers["authorization"].flatMap(Self.bearerToken) }

    /// The token of an `Authorization` header's value (`bearerToken`).
    static func bearerToken(_ authorization: String) -> String? {
        var value = authorization
        return value.withUTF8 { bytes -> String? in
            let scheme = Self.bearerScheme
            guard bytes.count > scheme.count else { return nil }
            for offset in 0..<scheme.count {
                let byte = bytes[offset]
                let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
                guard lowered == scheme[offset] else { return nil }
            }
            var (start, end) = (scheme.count, bytes.count)
            while start < end, isBlank(bytes[start]) { start += 1 }
            while end > start, isBlank(bytes[end - 1]) { end -= 1 }
            return start == end
                ? nil : String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
    }

    private static let bearerScheme = Array("bearer ".utf8)
}

/// A space or a tab: HTTP's optional whitespace.
private func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

extension HTTPRequest {
    /// The escapes libmicrohttpd leaves for chatd (`chatd_unescape` in shim.h): `%00`, `%2F`
    /// and `%25`, decoded here once and last, so nothing is decoded twice.
    enum KeptEscapes {
        /// The path, or nil when it encodes a NUL or a `/` (400).
        static func path(_ raw: String) -> String? {
            guard hasEscape(raw) else { return raw }  // most paths: Foundation's search is a tenth of a read
            let lowered = raw.lowercased()
            guard !lowered.contains("%00"), !lowered.contains("%2f") else { return nil }
            return raw.replacingOccurrences(of: "%25", with: "%")
        }

        /// The query arguments with every name and value decoded, or nil when one encodes a NUL (400).
        static func query(_ raw: [(String, String)]) -> QueryArguments? {
            var query = QueryArguments()
            for (name, value) in raw {
                guard let name = argument(name), let value = argument(value) else { return nil }
                query.add(name, value)
            }
            return query
        }

        /// A query name or value, or nil when it encodes a NUL (400).
        static func argument(_ raw: String) -> String? {
            guard hasEscape(raw) else { return raw }
            guard !raw.contains("%00") else { return nil }
            return raw.replacingOccurrences(of: "%2F", with: "/").replacingOccurrences(of: "%2f", with: "/")
                .replacingOccurrences(of: "%25", with: "%")
        }

        /// Whether `raw` holds a `%` (read as bytes).
        static func hasEscape(_ raw: String) -> Bool { raw.utf8.contains(UInt8(ascii: "%")) }
    }
}

extension Substring.UTF8View {
    /// Without the spaces and tabs around it (HTTP's optional whitespace), read as bytes:
    /// header values are read on every request.
    var trimmingBlanks: Substring.UTF8View {
        var bytes = self
        while let first = bytes.first, isBlank(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, isBlank(last) { bytes = bytes.dropLast() }
        return bytes
    }
}
