import Foundation
import OfflineChatWebSocket

/// Realtime over the `OfflineChatWebSocket` module's blocking client: a dedicated thread per socket
/// reads frames and feeds them to an async stream.
struct POSIXRealtimeTransport: RealtimeTransport {
    /// A PEM file trusted for `wss` besides the system's store.
    var trustedCertificates: String?

    func connect(to url: URL, token: String) async throws -> any RealtimeSocket {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let client = try WebSocketClient.connect(
                        to: url, headers: ["Authorization": "Bearer \(token)"],
                        trustedCertificates: trustedCertificates)
                    continuation.resume(returning: POSIXRealtimeSocket(client))
                } catch {
                    continuation.resume(throwing: ChatException.offline("realtime: \(error)"))
                }
            }
        }
    }
}

final class POSIXRealtimeSocket: RealtimeSocket {
    private let client: WebSocketClient
    let messages: AsyncThrowingStream<String, any Error>

    init(_ client: WebSocketClient) {
        self.client = client
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: String.self, throwing: (any Error).self)
        messages = stream
        Thread.detachNewThread {
            do {
                while true {
                    switch try client.receive() {
                    case .text(let text): continuation.yield(text)
                    case .close:
                        continuation.finish()
                        return
                    default: continue
                    }
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in client.shutdown() }
    }

    func send(_ text: String) throws { try client.send(text: text) }

    func close() {
        client.close(.normal)
        client.shutdown()
    }
}
