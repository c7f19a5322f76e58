import Foundation
import OfflineChatProtocol

/// What a route answers: a status, headers and a body, or a WebSocket upgrade.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// For 101 answers: takes over the upgraded socket.
    public var upgrade: (@Sendable (UpgradedSocket) -> Void)?
    /// A body read from a file as the client takes it, instead of `body`.
    public var file: ResponseFile?

    public init(
        status: Int, headers: [(String, String)] = [], body: [UInt8] = [],
        upgrade: (@Sendable (UpgradedSocket) -> Void)? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.upgrade = upgrade
    }

    /// A JSON body (`CompactJSONEncoder`: keys in the types' order).
    public static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
        do {
            return .json(EncodedJSON(bytes: try CompactJSONEncoder().encode(value)), status: status)
        } catch {
            return .error(HTTPError(500, .internalError, "cannot encode the response: \(error)"))
        }
    }

    /// A JSON body written before (`EncodedJSON`), sent as it is.
    public static func json(_ encoded: EncodedJSON, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: encoded.bytes)
    }

    /// A JSON error body `{"code", "message"}`.
    public static func error(_ error: HTTPError) -> HTTPResponse {
        var response = HTTPResponse.json(error.body, status: error.status)
        response.headers += error.headers
        return response
    }

    /// 204 without a body.
    public static let noContent = HTTPResponse(status: 204)
}

/// An open file sent as an answer's body, read as the client takes it (never whole in memory).
/// Closed, and `onClose` run, once libmicrohttpd lets go of it (sent, or the client gone).
public final class ResponseFile: Sendable {
    let fd: Int32
    let size: Int
    private let onClose: @Sendable () -> Void

    init(fd: Int32, size: Int, onClose: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.size = size
        self.onClose = onClose
    }

    deinit {
        close(fd)
        onClose()
    }
}

/// A failure that becomes an HTTP error answer. Thrown by routes and validation.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    public var status: Int
    public var body: APIError
    /// Extra answer headers (`Retry-After`).
    public var headers: [(String, String)] = []

    public init(_ status: Int, _ code: ErrorCode, _ message: String) {
        self.status = status
        self.body = APIError(code: code, message: message)
    }

    /// 429 with `Retry-After` in whole seconds (at least 1).
    static func rateLimited(retryAfterMilliseconds: Int64, _ message: String) -> HTTPError {
        let seconds = max(1, (retryAfterMilliseconds + 999) / 1000)
        var error = HTTPError(429, .rateLimited, "\(message): retry in \(seconds) s")
        error.headers = [("Retry-After", String(seconds))]
        return error
    }

    /// A store refusal with the status its code has everywhere in chatd's API.
    public init(_ error: StoreError) {
        self.init(Self.status(of: error.code), error.code, error.message)
    }

    /// The one table from error code to HTTP status.
    static func status(of code: ErrorCode) -> Int {
        switch code {
        case .malformedJSON, .invalidParameter, .invalidCursor: 400
        case .unauthorized, .tokenExpired, .tokenRevoked: 401
        case .forbidden, .blocked, .quotaExceeded, .banned: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .conflict: 409
        case .cursorExpired: 410
        case .payloadTooLarge: 413
        case .unsupportedMediaType: 415
        case .validationFailed: 422
        case .rateLimited: 429
        case .unavailable: 503
        default: 500
        }
    }

    public var description: String { "\(status) \(body)" }

    /// A 500 as the client sees it: a request id (also `X-Request-Id`) and nothing of `detail`
    /// (a database's own message, a path), which goes to the log under that id.
    static func internalFailure(detail: String) -> HTTPError {
        let id = String(UInt64.random(in: 1 << 60 ... .max), radix: 16)
        Log.write("request \(id) failed: \(detail)")
        var error = HTTPError(500, .internalError, "internal error; the server's log has request \(id)")
        error.headers.append(("X-Request-Id", id))
        return error
    }

    static func badParameter(_ message: String) -> HTTPError { HTTPError(400, .invalidParameter, message) }
    static func validation(_ message: String) -> HTTPError { HTTPError(422, .validationFailed, message) }
    static func notFound(_ message: String) -> HTTPError { HTTPError(404, .notFound, message) }
    static func forbidden(_ message: String) -> HTTPError { HTTPError(403, .forbidden, message) }
}

/// A socket handed over after a 101 answer; `close()` returns it to the HTTP library.
public struct UpgradedSocket: Sendable {
    public let fd: Int32
    /// Bytes the library read past the request head (the start of the first frames).
    public let initialBytes: [UInt8]
    public let close: @Sendable () -> Void
}
