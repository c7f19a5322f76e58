import Foundation
import OfflineChat
import OfflineChatLocking

extension FakeChatd {
    /// The SDK's realtime sockets, opened in process: `hello` with the user's head cursor, then
    /// every change of theirs as it is stored.
    struct Realtime: RealtimeTransport {
        let server: FakeChatd

        func connect(to url: URL, token: String) async throws -> any RealtimeSocket {
            try server.open(token: token)
        }
    }

    func open(token: String) throws -> FakeRealtimeSocket {
        try state.withLock { state in
            guard state.reachable, let uid = state.tokens[token] else {
                // As a refused upgrade looks to a real client: the SDK asks `GET /v1/me` why.
                throw ChatException(
                    errorCode: ChatException.internetUnavailable, errorDescription: "FakeChatd refused the socket")
            }
            state.nextSocket += 1
            let id = state.nextSocket
            let socket = FakeRealtimeSocket(uid: uid) { [weak self] in
                _ = self?.state.withLock { $0.sockets.removeValue(forKey: id) }
            }
            state.sockets[id] = socket
            let head = state.changes[uid, default: []].count
            socket.push(Self.json(RealtimeEnvelope(type: .hello, uid: uid, cursor: "\(head)")))
            return socket
        }
    }
}

/// One realtime socket of `FakeChatd`.
final class FakeRealtimeSocket: RealtimeSocket {
    let uid: String
    let messages: AsyncThrowingStream<String, any Error>
    private let continuation: AsyncThrowingStream<String, any Error>.Continuation
    private let closed: @Sendable () -> Void

    init(uid: String, closed: @escaping @Sendable () -> Void) {
        self.uid = uid
        self.closed = closed
        (messages, continuation) = AsyncThrowingStream.makeStream(of: String.self, throwing: (any Error).self)
    }

    func push(_ frame: String) { continuation.yield(frame) }

    /// The network went away under it.
    func drop() {
        continuation.finish(
            throwing: ChatException(
                errorCode: ChatException.internetUnavailable, errorDescription: "FakeChatd became unreachable"))
    }

    /// Typing frames from the app: the fake has no one to pass them to.
    func send(_ text: String) throws {}

    func close() {
        continuation.finish()
        closed()
    }
}
