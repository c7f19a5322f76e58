import Foundation

/// One open realtime WebSocket: the text messages the server sends, and a way to send.
protocol RealtimeSocket: Sendable {
    /// Every text message until the connection ends (then the stream finishes, or throws).
    var messages: AsyncThrowingStream<String, any Error> { get }
    func send(_ text: String) throws
    func close()
}

/// Opens realtime sockets. Linux uses the `WebSocket` module's POSIX client; Apple
/// platforms use `URLSessionWebSocketTask`. Both behind this one protocol.
protocol RealtimeTransport: Sendable {
    func connect(to url: URL, token: String) async throws -> any RealtimeSocket
}

enum RealtimeTransports {
    static func platformDefault(trustedCertificates: URL? = nil) -> any RealtimeTransport {
        #if canImport(Darwin)
        URLSessionRealtimeTransport()
        #else
        POSIXRealtimeTransport(trustedCertificates: trustedCertificates?.path)
        #endif
    }
}
