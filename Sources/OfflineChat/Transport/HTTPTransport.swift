import Foundation
import OfflineChatWebSocket

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the SDK's HTTP requests travel (``ChatConfig/httpTransport``): one exchange per call.
/// Implementations throw a ``ChatException`` with code ``ChatException/internetUnavailable``
/// when no complete answer arrives (refused, reset, cut short, timed out).
public protocol HTTPTransport: Sendable {
    /// One exchange: `url` with its query, header fields, and the body (JSON or a file's bytes).
    /// An answer body over `maxBytes` is ``ChatException/mediaTooLarge`` (it is not read past
    /// that where the transport can stop).
    func send(
        method: String, url: URL, headers: [String: String], body: Data?, maxBytes: Int
    ) async throws -> HTTPAnswer
}

/// A complete HTTP answer.
public struct HTTPAnswer: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields by lowercased name.
    public var headers: [String: String]
    /// The body, whole.
    public var body: Data

    /// An answer with `status`, `headers` (names lowercased) and `body`.
    public init(status: Int, headers: [String: String] = [:], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

enum HTTPTransports {
    /// The largest answer any request reads.
    static let maxAnswer = 64 << 20

    /// What a `URLError` means for the app: no network is `ERROR_INTERNET_UNAVAILABLE`, as
    /// before; an untrusted certificate or a failed handshake `ERROR_SECURE_CONNECTION_FAILED`;
    /// a plain `http://` server App Transport Security refuses
    /// `ERROR_INSECURE_CONNECTION_REFUSED`; a URL the platform cannot use
    /// `ERROR_INVALID_ARGUMENT`. Only the first is "queued, not failed" for a send.
    static func failure(_ error: URLError) -> ChatException {
        let detail = "\(error.localizedDescription) (URLError \(error.code.rawValue))"
        switch error.code {
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot, .clientCertificateRejected, .clientCertificateRequired,
            .secureConnectionFailed:
            return ChatException(.secureConnectionFailed, "the connection could not be secured: \(detail)")
        case .appTransportSecurityRequiresSecureConnection:
            return ChatException(
                .insecureConnectionRefused, "the platform refuses plain http:// to this server: \(detail)")
        case .badURL, .unsupportedURL:
            return ChatException(.invalidArgument, "the server URL cannot be used: \(detail)")
        default:
            return ChatException.offline(detail)
        }
    }

    static func tooLarge(_ limit: Int) -> ChatException {
        ChatException(.mediaTooLarge, "the answer is larger than \(limit) bytes")
    }

    static func platformDefault(timeout: TimeInterval, trustedCertificates: URL? = nil) -> any HTTPTransport {
        #if canImport(Darwin)
        URLSessionHTTPTransport(timeout: timeout)
        #else
        // FoundationNetworking on Linux traps ("Transfer completed, but there's no response")
        // when a connection closes before a response: a network fault must not crash an app.
        POSIXHTTPTransport(timeout: timeout, trustedCertificates: trustedCertificates?.path)
        #endif
    }
}

/// `URLSession` (Apple platforms).
struct URLSessionHTTPTransport: HTTPTransport {
    let session: URLSession

    init(timeout: TimeInterval) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
    }

    func send(
        method: String, url: URL, headers: [String: String], body: Data?, maxBytes: Int
    ) async throws -> HTTPAnswer {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { throw ChatException.offline("no HTTP response") }
            guard data.count <= maxBytes else { throw HTTPTransports.tooLarge(maxBytes) }
            var fields: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                fields[String(describing: name).lowercased()] = String(describing: value)
            }
            return HTTPAnswer(status: http.statusCode, headers: fields, body: data)
        } catch let error as ChatException {
            throw error
        } catch {
            throw (error as? URLError).map(HTTPTransports.failure) ?? ChatException.offline("\(error)")
        }
    }
}

/// A small HTTP/1.1 client over the `OfflineChatWebSocket` module's POSIX sockets (TLS for `https`): one connection per
/// exchange (`Connection: close`), a timeout on every read and write, and an answer accepted
/// only when complete (a body cut short is a network failure, never a half message).
struct POSIXHTTPTransport: HTTPTransport {
    let timeout: TimeInterval
    /// A PEM file of certificates trusted besides the system's (`ChatConfig.trustedCertificates`).
    var trustedCertificates: String?

    func send(
        method: String, url: URL, headers: [String: String], body: Data?, maxBytes: Int
    ) async throws -> HTTPAnswer {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    continuation.resume(
                        returning: try exchange(
                            method: method, url: url, headers: headers, body: body, maxBytes: maxBytes))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    private func exchange(
        method: String, url: URL, headers: [String: String], body: Data?, maxBytes: Int
    ) throws -> HTTPAnswer {
        guard let endpoint = Endpoint(url), url.scheme?.lowercased().hasPrefix("http") == true else {
            throw ChatException.invalid("this transport speaks http:// and https://, not \(url.scheme ?? "?")")
        }
        let stream: any ByteStream
        do {
            stream = try endpoint.connect(timeout: timeout, trustedCertificates: trustedCertificates)
        } catch {
            throw error.kind == .tls
                ? ChatException(.secureConnectionFailed, "the connection could not be secured: \(error)")
                : ChatException.offline("\(error)")
        }
        var target = url.path.isEmpty ? "/" : (url.path(percentEncoded: true))
        if let query = url.query(percentEncoded: true) { target += "?\(query)" }
        var head =
            "\(method) \(target) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\nConnection: close\r\nAccept: application/json\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body?.count ?? 0)\r\n\r\n"
        var received: [UInt8] = []
        do {
            try stream.write(Array(head.utf8) + Array(body ?? Data()))
            while true {
                let chunk = try stream.read(max: 64 << 10)
                if chunk.isEmpty { break }
                received += chunk
                // The head is small: past the limit and a head's room, stop reading.
                guard received.count <= maxBytes + 16 << 10 else { throw HTTPTransports.tooLarge(maxBytes) }
            }
        } catch let error as ChatException {
            throw error
        } catch {
            throw ChatException.offline("\(error)")
        }
        let answer = try Self.parse(received)
        guard answer.body.count <= maxBytes else { throw HTTPTransports.tooLarge(maxBytes) }
        return answer
    }

    /// A complete HTTP/1.1 response (Content-Length, chunked, or to EOF).
    static func parse(_ bytes: [UInt8]) throws -> HTTPAnswer {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            throw ChatException.offline("the answer ended inside its head")
        }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = (lines.first ?? "").split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw ChatException.offline("not an HTTP answer")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let rest = Array(bytes[end.upperBound...])
        if fields["transfer-encoding"]?.lowercased().contains("chunked") == true {
            return HTTPAnswer(status: status, headers: fields, body: try dechunk(rest))
        }
        if let length = fields["content-length"].flatMap(Int.init) {
            guard rest.count >= length else {
                throw ChatException.offline("the answer was cut short (\(rest.count) of \(length) bytes)")
            }
            return HTTPAnswer(status: status, headers: fields, body: Data(rest.prefix(length)))
        }
        return HTTPAnswer(status: status, headers: fields, body: Data(rest))
    }

    static func dechunk(_ bytes: [UInt8]) throws -> Data {
        var body = Data()
        var index = 0
        while true {
            guard let lineEnd = bytes[index...].firstRange(of: Array("\r\n".utf8)) else {
                throw ChatException.offline("a chunk was cut short")
            }
            let sizeText =
                String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw ChatException.offline("a bad chunk size")
            }
            index = lineEnd.upperBound
            if size == 0 { return body }
            guard index + size + 2 <= bytes.count else { throw ChatException.offline("a chunk was cut short") }
            body.append(contentsOf: bytes[index..<index + size])
            index += size + 2
        }
    }
}
