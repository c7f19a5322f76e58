import Foundation
import OfflineChatLocking

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Realtime over `URLSessionWebSocketTask`: the Apple platforms' transport. It compiles (and its
/// logic is tested with a stand-in task) everywhere; on Linux the task itself does not work
/// (libcurl has no WebSocket), so Linux uses `POSIXRealtimeTransport`.
struct URLSessionRealtimeTransport: RealtimeTransport {
    let clock: any ChatClock
    var session: URLSession = .shared

    func connect(to url: URL, token: String) async throws -> any RealtimeSocket {
        var request = URLRequest(url: url)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let task = session.webSocketTask(with: request)
        // chatd's frames are small; a sync-sized burst still fits (URLSession's default is 1 MiB).
        task.maximumMessageSize = URLSessionRealtimeSocket.maximumMessageSize
        return try await URLSessionRealtimeSocket.open(URLSessionTaskHandle(task: task), clock: clock)
    }
}

/// The parts of a `URLSessionWebSocketTask` the realtime socket uses; tests drive a stand-in.
protocol WebSocketTaskHandle: Sendable {
    func resume()
    /// Sends a ping; `pong` hears the pong (nil) or the failure, once.
    func sendPing(_ pong: @escaping @Sendable ((any Error)?) -> Void)
    /// The next text (or binary, as UTF-8) message.
    func receive() async throws -> String
    func send(_ text: String)
    func cancel()
    /// The HTTP status of the upgrade's answer, once there is one.
    var upgradeStatus: Int? { get }
}

/// A `URLSessionWebSocketTask` behind `WebSocketTaskHandle` (the task is thread-safe).
struct URLSessionTaskHandle: WebSocketTaskHandle, @unchecked Sendable {
    let task: URLSessionWebSocketTask

    func resume() { task.resume() }
    func sendPing(_ pong: @escaping @Sendable ((any Error)?) -> Void) { task.sendPing(pongReceiveHandler: pong) }
    func receive() async throws -> String {
        switch try await task.receive() {
        case .string(let text): return text
        case .data(let data): return String(decoding: data, as: UTF8.self)
        @unknown default: return ""
        }
    }
    func send(_ text: String) { task.send(.string(text)) { _ in } }
    func cancel() { task.cancel(with: .goingAway, reason: nil) }
    var upgradeStatus: Int? { (task.response as? HTTPURLResponse)?.statusCode }
}

/// One realtime socket over a WebSocket task: open only once the handshake is done (a first
/// ping's pong proves it: URLSession answers pings only on an open socket), kept alive by a
/// ping every `pingInterval` that must be answered within `pongTimeout` (a connection that died
/// silently, a network switched under it, ends instead of hanging), and closed for good when
/// its stream ends.
final class URLSessionRealtimeSocket: RealtimeSocket {
    static let maximumMessageSize = 16 << 20
    /// Milliseconds between keepalive pings, and the wait for each pong.
    static let pingInterval: Int64 = 25_000
    static let pongTimeout: Int64 = 10_000

    private let task: any WebSocketTaskHandle
    let messages: AsyncThrowingStream<String, any Error>

    /// Starts `task` and returns once its handshake is done; throws when it fails: a 401 on the
    /// upgrade as such (the token is no longer accepted), a transport failure as what it means
    /// (`HTTPTransports.failure`).
    static func open(_ task: any WebSocketTaskHandle, clock: any ChatClock) async throws -> URLSessionRealtimeSocket {
        task.resume()
        do {
            try await ping(task, clock: clock)
        } catch {
            task.cancel()
            if task.upgradeStatus == 401 {
                throw ChatException(.unauthorized, "realtime: the token is no longer accepted", httpStatus: 401)
            }
            throw error as? ChatException
                ?? (error as? URLError).map(HTTPTransports.failure)
                ?? ChatException.offline("realtime: \(error)")
        }
        return URLSessionRealtimeSocket(task, clock: clock)
    }

    private init(_ task: any WebSocketTaskHandle, clock: any ChatClock) {
        self.task = task
        messages = AsyncThrowingStream { continuation in
            let reader = Task {
                do {
                    while true { continuation.yield(try await task.receive()) }
                } catch {
                    continuation.finish(
                        throwing: (error as? URLError).map(HTTPTransports.failure)
                            ?? ChatException.offline("realtime: \(error)"))
                }
            }
            let keepalive = Task {
                do {
                    while true {
                        try await clock.sleep(milliseconds: Self.pingInterval)
                        try await Self.ping(task, clock: clock)
                    }
                } catch is CancellationError {
                } catch {
                    // No pong: the connection is gone; ending the task ends the reader.
                    continuation.finish(throwing: ChatException.offline("realtime: no pong (\(error))"))
                }
            }
            continuation.onTermination = { _ in
                reader.cancel()
                keepalive.cancel()
                task.cancel()
            }
        }
    }

    /// A ping, answered within `pongTimeout` (else a timeout error).
    private static func ping(_ task: any WebSocketTaskHandle, clock: any ChatClock) async throws {
        let wait = PongWait()
        let timer = Task {
            guard (try? await clock.sleep(milliseconds: pongTimeout)) != nil else { return }
            wait.settle(URLError(.timedOut))
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { continuation in
            wait.begin(continuation)
            task.sendPing { error in wait.settle(error) }
        }
    }

    /// One ping's wait: the pong, a failure or the timeout, whichever comes first, settles it.
    private final class PongWait: Sendable {
        private let state = Locked<(waiting: CheckedContinuation<Void, any Error>?, outcome: (any Error)??)>((nil, nil))

        func begin(_ continuation: CheckedContinuation<Void, any Error>) {
            let early = state.withLock { state -> (any Error)?? in
                guard let outcome = state.outcome else {
                    state.waiting = continuation
                    return nil
                }
                return .some(outcome)
            }
            if let early { Self.resume(continuation, early) }
        }

        func settle(_ error: (any Error)?) {
            let waiting = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard state.outcome == nil else { return nil }
                state.outcome = .some(error)
                defer { state.waiting = nil }
                return state.waiting
            }
            if let waiting { Self.resume(waiting, error) }
        }

        private static func resume(_ continuation: CheckedContinuation<Void, any Error>, _ error: (any Error)?) {
            if let error { continuation.resume(throwing: error) } else { continuation.resume() }
        }
    }

    func send(_ text: String) throws { task.send(text) }

    func close() { task.cancel() }
}
