#if os(Linux) || os(macOS)
import OfflineChatLocking
import OfflineChatCache
import Foundation
import OfflineChatWebSocket
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A loopback TCP proxy in front of chatd that injects faults into HTTP exchanges (realtime
/// upgrades always pass): drop the response after the request went through, stall, cut the
/// response mid-body. Switch `mode` at any time; it applies to data relayed from then on.
public final class FaultProxy: @unchecked Sendable {  // mutable state under `lock`
    /// What the proxy does to the HTTP exchanges it relays from now on.
    public enum Mode: Sendable {
        /// Everything is relayed untouched.
        case pass
        /// The request reaches chatd; its response is thrown away and the connection closed.
        case dropResponse
        /// Nothing comes back (until the mode changes).
        case stall
        /// Half of the response is sent, then the connection is closed.
        case cutMidBody
        /// The network is gone: open connections (realtime too) are cut and new ones closed at once.
        case offline
    }

    /// The loopback port the proxy listens on (point the client at `url`).
    public let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let lock = NSCondition()
    private var currentMode = Mode.pass
    private var sockets: Set<Int32> = []

    /// The fault applied to data relayed from now on; `.offline` also cuts open connections.
    public var mode: Mode {
        get {
            lock.lock()
            defer { lock.unlock() }
            return currentMode
        }
        set {
            lock.lock()
            currentMode = newValue
            lock.broadcast()
            lock.unlock()
            if case .offline = newValue { closeAll() }
        }
    }

    /// `http://127.0.0.1:<port>`: the server URL to configure the client with.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Listens on a free loopback port and relays to chatd on `upstreamPort`, in `.pass` mode.
    public init(upstreamPort: Int) throws {
        // Writing to a connection the proxy just cut must not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        self.upstreamPort = upstreamPort
        (listener, port) = try Loopback.listen()
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        closeAll()
    }

    /// Drops every relayed connection at once (a network flap).
    public func closeAll() {
        lock.lock()
        let open = sockets
        sockets = []
        lock.unlock()
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            Socket.noSignalOnWrite(client)
            if case .offline = mode {
                close(client)
                continue
            }
            let upstream = Socket.tcp()
            var address = Loopback.address(port: UInt16(upstreamPort))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(client)
                close(upstream)
                continue
            }
            lock.lock()
            sockets.insert(client)
            sockets.insert(upstream)
            lock.unlock()
            let upgraded = Locked(false)
            Thread.detachNewThread { [self] in relay(from: client, to: upstream, requests: true, upgraded: upgraded) }
            Thread.detachNewThread { [self] in relay(from: upstream, to: client, requests: false, upgraded: upgraded) }
        }
    }

    private func relay(from source: Int32, to target: Int32, requests: Bool, upgraded: Locked<Bool>) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        defer {
            shutdown(source, Int32(SHUT_RDWR))
            shutdown(target, Int32(SHUT_RDWR))
        }
        while true {
            let count = read(source, &buffer, buffer.count)
            guard count > 0 else { return }
            var chunk = Array(buffer[0..<count])
            if requests {
                if String(decoding: chunk.prefix(64), as: UTF8.self).contains("/v1/realtime") {
                    upgraded.withLock { $0 = true }
                }
            } else if !upgraded.current {
                switch mode {
                case .pass: break
                case .dropResponse, .offline: return
                case .stall:
                    lock.lock()
                    while currentMode == .stall { lock.wait() }
                    lock.unlock()
                case .cutMidBody:
                    chunk = Array(chunk.prefix(max(1, chunk.count / 2)))
                    _ = chunk.withUnsafeBytes { write(target, $0.baseAddress, $0.count) }
                    return
                }
            }
            var written = 0
            while written < chunk.count {
                let result = chunk[written...].withUnsafeBytes { write(target, $0.baseAddress, $0.count) }
                guard result > 0 else { return }
                written += result
            }
        }
    }
}

#endif
