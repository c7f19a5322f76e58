#if canImport(Darwin)
import Foundation

/// Realtime over `URLSessionWebSocketTask` (Apple platforms).
struct URLSessionRealtimeTransport: RealtimeTransport {
    func connect(to url: URL, token: String) async throws -> any RealtimeSocket {
        var request = URLRequest(url: url)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let task = URLSession.shared.webSocketTask(with: request)
        task.resume()
        return URLSessionRealtimeSocket(task)
    }
}

final class URLSessionRealtimeSocket: RealtimeSocket, @unchecked Sendable {  // the task is thread-safe
    private let task: URLSessionWebSocketTask
    let messages: AsyncThrowingStream<String, any Error>

    init(_ task: URLSessionWebSocketTask) {
        self.task = task
        messages = AsyncThrowingStream { continuation in
            let reader = Task {
                do {
                    while true {
                        switch try await task.receive() {
                        case .string(let text): continuation.yield(text)
                        case .data(let data): continuation.yield(String(decoding: data, as: UTF8.self))
                        @unknown default: continue
                        }
                    }
                } catch {
                    continuation.finish(throwing: ChatException.offline("realtime: \(error.localizedDescription)"))
                }
            }
            continuation.onTermination = { _ in reader.cancel() }
        }
    }

    func send(_ text: String) throws { task.send(.string(text)) { _ in } }

    func close() { task.cancel(with: .normalClosure, reason: nil) }
}
#endif
