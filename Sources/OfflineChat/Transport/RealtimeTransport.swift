import Foundation

/// One open realtime WebSocket: the text messages the server sends, and a way to send.
public protocol RealtimeSocket: Sendable {
    /// Every text message until the connection ends (then the stream finishes, or throws).
    var messages: AsyncThrowingStream<String, any Error> { get }
    /// Sends one text message (a `RealtimeEnvelope` as JSON).
    func send(_ text: String) throws
    /// Closes the socket; `messages` then finishes.
    func close()
}

/// Opens realtime sockets (``ChatConfig/realtimeTransport``). Linux uses the `WebSocket`
/// module's POSIX client; Apple platforms use `URLSessionWebSocketTask`; tests may use a
/// stand-in. All behind this one protocol.
public protocol RealtimeTransport: Sendable {
    /// Opens `url` (`ws://` or `wss://…/v1/realtime`) with the bearer `token`; throws when no
    /// socket opens (offline, refused, or a 401 for a token no longer accepted).
    func connect(to url: URL, token: String) async throws -> any RealtimeSocket
}

enum RealtimeTransports {
    static func platformDefault(clock: any ChatClock, trustedCertificates: URL? = nil) -> any RealtimeTransport {
        #if canImport(Darwin)
        URLSessionRealtimeTransport(clock: clock)
        #else
        POSIXRealtimeTransport(trustedCertificates: trustedCertificates?.path)
        #endif
    }
}
