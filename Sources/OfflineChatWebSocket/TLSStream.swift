#if canImport(COfflineChatOpenSSL)
internal import COfflineChatOpenSSL
import Foundation
import Glibc
import OfflineChatLocking

/// TLS (1.2 or later) over a TCP socket with OpenSSL: the server's certificate must chain to
/// the system's trust store (or `trustedCertificates`) and name the host. The socket is
/// non-blocking; each OpenSSL call runs under the lock of `ssl` (a read and a write from two threads take
/// turns, which OpenSSL requires) and waits for the socket with `poll` outside it, so a
/// blocked read never holds up a write.
final class TLSStream: ByteStream, Sendable {
    private let fd: Int32
    private let ssl: Locked<OpaquePointer>
    /// Milliseconds a read or write waits for the socket; -1: no limit.
    private let waitLimit: Int32
    private let closed = Locked(false)

    init(fd: Int32, host: String, timeout: Double?, trustedCertificates: String?) throws(ConnectionError) {
        self.fd = fd
        waitLimit = timeout.map { Int32(min($0 * 1000, Double(Int32.max))) } ?? -1
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            Socket.close(fd)
            throw ConnectionError("TLS: \(Self.lastError())")
        }
        defer { SSL_CTX_free(context) }  // `ssl` keeps its own reference
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        _ = chat_tls_require_1_2(context)
        SSL_CTX_set_default_verify_paths(context)
        if let trustedCertificates, SSL_CTX_load_verify_locations(context, trustedCertificates, nil) != 1 {
            Socket.close(fd)
            throw ConnectionError("TLS: cannot load the trusted certificates in \(trustedCertificates)")
        }
        guard let ssl = SSL_new(context) else {
            Socket.close(fd)
            throw ConnectionError("TLS: \(Self.lastError())")
        }
        self.ssl = Locked(ssl)
        _ = chat_tls_set_write_modes(ssl)
        SSL_set_fd(ssl, fd)
        var address = in_addr()
        if inet_pton(AF_INET, host, &address) != 1 && !host.contains(":") {
            _ = chat_tls_set_server_name(ssl, host)  // names only: SNI carries no addresses
        }
        SSL_set1_host(ssl, host)  // a name or an IP address the certificate must carry
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = try perform("TLS handshake with \(host)") { SSL_connect($0) }
    }

    deinit {
        ssl.withLock { SSL_free($0) }
        Socket.close(fd)
    }

    func write(_ bytes: [UInt8]) throws(ConnectionError) {
        var offset = 0
        while offset < bytes.count {
            offset += try perform("write") { ssl in
                bytes.withUnsafeBytes {
                    SSL_write(ssl, $0.baseAddress! + offset, Int32(clamping: bytes.count - offset))
                }
            }
        }
    }

    func read(max: Int) throws(ConnectionError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        let count = try perform("read") { ssl in
            buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32(clamping: max)) }
        }
        return Array(buffer.prefix(count))
    }

    func shutdown() {
        closed.withLock { $0 = true }
        Socket.shutdown(fd)
    }

    /// Runs `call` until it makes progress (its positive result), waiting for the socket as
    /// OpenSSL asks; 0 at the end of the stream (or after `shutdown()`).
    private func perform(_ what: String, _ call: (OpaquePointer) -> Int32) throws(ConnectionError) -> Int {
        while true {
            let (result, error): (Int32, Int32) = ssl.withLock { ssl in
                ERR_clear_error()
                let result = call(ssl)
                return (result, result > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl, result))
            }
            switch error {
            case SSL_ERROR_NONE:
                return Int(result)
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                var poller = pollfd(fd: fd, events: Int16(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), revents: 0)
                let ready = Glibc.poll(&poller, 1, waitLimit)
                if ready == 0 { throw ConnectionError("TLS \(what) timed out") }
                if ready < 0 && errno != EINTR { throw ConnectionError("TLS \(what): poll failed") }
            case SSL_ERROR_ZERO_RETURN:
                return 0
            default:
                if closed.current { return 0 }
                let verify = ssl.withLock { SSL_get_verify_result($0) }
                if verify != X509_V_OK {
                    throw ConnectionError(
                        "TLS \(what): the certificate is not trusted (\(String(cString: X509_verify_cert_error_string(verify))))",
                        kind: .tls)
                }
                // the peer closed without a close_notify
                if error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 { return 0 }
                // An error inside the handshake is the securing's (a protocol or cipher the
                // server will not speak); later, the connection's.
                throw ConnectionError(
                    "TLS \(what): \(Self.lastError())", kind: what.hasPrefix("TLS handshake") ? .tls : .network)
            }
        }
    }

    private static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "connection closed" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
#endif
