import Foundation

/// A connected stream of bytes: a plain TCP socket, or TLS over one. One thread may read
/// while another writes; `shutdown()` from any thread wakes a blocked read (it then returns
/// the end of the stream).
public protocol ByteStream: AnyObject, Sendable {
    /// Writes every byte.
    func write(_ bytes: [UInt8]) throws(ConnectionError)
    /// What is available (blocking until something is); empty at the end of the stream.
    func read(max: Int) throws(ConnectionError) -> [UInt8]
    /// Stops both directions without releasing the descriptor.
    func shutdown()
}

/// Where a stream goes and how: `ws`/`http` plain, `wss`/`https` over TLS (verified against
/// the system's trust store plus `trustedCertificates`, a PEM file, if given).
public struct Endpoint: Sendable {
    public let host: String
    public let port: Int
    public let secure: Bool

    /// The endpoint of `url`, or nil for a scheme other than http(s) and ws(s).
    public init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else { return nil }
        switch scheme {
        case "http", "ws": secure = false
        case "https", "wss": secure = true
        default: return nil
        }
        self.host = host
        port = url.port ?? (secure ? 443 : 80)
    }

    /// `host:port` as a `Host` header writes it (IPv6 in brackets).
    public var hostHeader: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// Connects; reads and writes give up after `timeout` seconds when given.
    public func connect(
        timeout: Double? = nil, trustedCertificates: String? = nil
    ) throws(ConnectionError) -> any ByteStream {
        let fd = try Socket.connect(host: host, port: port)
        guard secure else {
            if let timeout { Socket.setTimeout(fd, seconds: timeout) }
            return PlainStream(fd: fd)
        }
        #if canImport(COfflineChatOpenSSL)
        return try TLSStream(fd: fd, host: host, timeout: timeout, trustedCertificates: trustedCertificates)
        #else
        Socket.close(fd)
        throw ConnectionError("TLS needs the OpenSSL transport (Linux); use URLSession on this platform")
        #endif
    }
}

/// A plain TCP socket; it closes `fd` when released.
public final class PlainStream: ByteStream {
    public let fd: Int32

    public init(fd: Int32) { self.fd = fd }
    deinit { Socket.close(fd) }

    public func write(_ bytes: [UInt8]) throws(ConnectionError) { try Socket.writeAll(fd, bytes) }
    public func read(max: Int) throws(ConnectionError) -> [UInt8] { try Socket.readSome(fd, max: max) }
    public func shutdown() { Socket.shutdown(fd) }
}
