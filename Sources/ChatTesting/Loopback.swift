#if os(Linux) || os(macOS)
import Foundation
import OfflineChatWebSocket
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A TCP socket listening on 127.0.0.1 (port 0: any free one), for test servers and proxies.
public enum Loopback {
    /// The listening descriptor and its port.
    public static func listen(backlog: Int32 = 64) throws -> (fd: Int32, port: Int) {
        let descriptor = Socket.tcp()
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = self.address(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, systemListen(descriptor, backlog) == 0 else {
            close(descriptor)
            throw LiveChatd.Failure("cannot listen on 127.0.0.1")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    private static func systemListen(_ descriptor: Int32, _ backlog: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.listen(descriptor, backlog)
        #else
        Darwin.listen(descriptor, backlog)
        #endif
    }

    /// 127.0.0.1:`port`.
    public static func address(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }
}
#endif
