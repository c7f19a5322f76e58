#if canImport(Glibc)
import Glibc
private let streamType = Int32(SOCK_STREAM.rawValue)
private let noSignal = Int32(MSG_NOSIGNAL)
#elseif canImport(Darwin)
import Darwin
private let streamType = SOCK_STREAM
private let noSignal: Int32 = 0
#endif

/// A failure of the socket layer or the opening handshake.
public struct ConnectionError: Error, Sendable, CustomStringConvertible {
    /// What failed: the network (refused, reset, timed out) or the securing of a connection
    /// that was reached (an untrusted certificate, a failed TLS handshake).
    public enum Kind: Sendable { case network, tls }

    public let reason: String
    public let kind: Kind
    public init(_ reason: String, kind: Kind = .network) {
        self.reason = reason
        self.kind = kind
    }
    public var description: String { reason }
}

/// Thin POSIX socket calls used by the WebSocket client and server.
public enum Socket {
    /// A write to a socket whose peer has gone fails with EPIPE instead of killing the process
    /// with SIGPIPE. Linux asks per write (`MSG_NOSIGNAL`); Darwin has no such flag and asks
    /// once per socket (`SO_NOSIGPIPE`), which this sets.
    public static func noSignalOnWrite(_ fd: Int32) {
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// A new TCP socket (IPv4), SIGPIPE off (`noSignalOnWrite`); -1 when none can be made.
    public static func tcp() -> Int32 {
        let fd = socket(AF_INET, streamType, 0)
        if fd >= 0 { noSignalOnWrite(fd) }
        return fd
    }

    /// Connects a blocking TCP socket to `host:port` (names resolved with getaddrinfo).
    public static func connect(host: String, port: Int) throws(ConnectionError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = streamType
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw ConnectionError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let info = entry {
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if fd >= 0 {
                Socket.noSignalOnWrite(fd)
                if systemConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                    var one: Int32 = 1
                    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                    return fd
                }
                lastError = errno
                close(fd)
            }
            entry = info.pointee.ai_next
        }
        throw ConnectionError("cannot connect to \(host):\(port): \(String(cString: strerror(lastError)))")
    }

    /// Writes every byte, retrying on short writes and EINTR. Never raises SIGPIPE.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(ConnectionError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, noSignal) }
            if written < 0 {
                if errno == EINTR { continue }
                throw ConnectionError("write failed: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Reads what is available (blocking until something is); an empty array means end of stream.
    public static func readSome(_ fd: Int32, max: Int = 64 << 10) throws(ConnectionError) -> [UInt8] {
        // Received straight into the answer's storage: no zeroing of `max` bytes and no copy
        // of what came (a realtime frame is a few hundred bytes of a 64 KB read).
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: max) { buffer, count in
            while true {
                let received = recv(fd, buffer.baseAddress, max, 0)
                if received >= 0 {
                    count = received
                    return
                }
                if errno != EINTR {
                    failure = errno
                    count = 0
                    return
                }
            }
        }
        guard failure == 0 else { throw ConnectionError("read failed: \(String(cString: strerror(failure)))") }
        return bytes
    }

    /// Makes blocking reads and writes give up after `seconds` (they then throw).
    public static func setTimeout(_ fd: Int32, seconds: Double) {
        var value = timeval()
        value.tv_sec = .init(seconds)
        value.tv_usec = .init((seconds - Double(Int(seconds))) * 1_000_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Stops both directions (wakes a blocked reader) without releasing the descriptor.
    public static func shutdown(_ fd: Int32) {
        _ = systemShutdown(fd)
    }

    /// Releases the descriptor.
    public static func close(_ fd: Int32) {
        _ = systemClose(fd)
    }
}

#if canImport(Glibc)
private func systemConnect(_ fd: Int32, _ addr: UnsafeMutablePointer<sockaddr>!, _ len: socklen_t) -> Int32 {
    Glibc.connect(fd, addr, len)
}
private func systemShutdown(_ fd: Int32) -> Int32 { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
private func systemClose(_ fd: Int32) -> Int32 { Glibc.close(fd) }
#elseif canImport(Darwin)
private func systemConnect(_ fd: Int32, _ addr: UnsafeMutablePointer<sockaddr>!, _ len: socklen_t) -> Int32 {
    Darwin.connect(fd, addr, len)
}
private func systemShutdown(_ fd: Int32) -> Int32 { Darwin.shutdown(fd, SHUT_RDWR) }
private func systemClose(_ fd: Int32) -> Int32 { Darwin.close(fd) }
#endif
