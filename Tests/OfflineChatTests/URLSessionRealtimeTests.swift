import ChatTesting
import Foundation
import OfflineChatLocking
import Testing

@testable import OfflineChat

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Apple platforms' realtime socket, driven here through a stand-in for its
/// `URLSessionWebSocketTask`: open only after the handshake, a refused upgrade is a 401,
/// keepalive pings end a connection that stopped answering, and an ended stream cancels its task.
@Suite(.timeLimit(.minutes(1))) struct URLSessionRealtimeTests {
    final class FakeTask: WebSocketTaskHandle, @unchecked Sendable {  // `reader` is used by the one reading task
        struct State {
            var resumed = false
            var cancelled = false
            var pongs: [@Sendable ((any Error)?) -> Void] = []
            var status: Int?
        }
        let state = Locked(State())
        let pinged = AsyncStream<Void>.makeStream()
        let inbox = AsyncThrowingStream<String, any Error>.makeStream()
        private var reader: AsyncThrowingStream<String, any Error>.AsyncIterator?

        func resume() { state.withLock { $0.resumed = true } }
        func sendPing(_ pong: @escaping @Sendable ((any Error)?) -> Void) {
            state.withLock { $0.pongs.append(pong) }
            pinged.continuation.yield()
        }
        func receive() async throws -> String {
            if reader == nil { reader = inbox.stream.makeAsyncIterator() }
            guard let text = try await reader?.next() else { throw URLError(.networkConnectionLost) }
            return text
        }
        func send(_ text: String) {}
        func cancel() { state.withLock { $0.cancelled = true } }
        var upgradeStatus: Int? { state.withLock { $0.status } }

        /// Answers the oldest unanswered ping.
        func pong(_ error: (any Error)? = nil) {
            let answer = state.withLock { $0.pongs.isEmpty ? nil : $0.pongs.removeFirst() }
            answer?(error)
        }
    }

    @Test func theSocketOpensOnlyOnceTheHandshakeIsDone() async throws {
        let task = FakeTask()
        let opened = Locked(false)
        let opening = Task {
            let socket = try await URLSessionRealtimeSocket.open(task, clock: ManualClock())
            opened.withLock { $0 = true }
            return socket
        }
        var pings = task.pinged.stream.makeAsyncIterator()
        _ = await pings.next()
        #expect(task.state.current.resumed)
        #expect(!opened.current, "not connected before the handshake")
        task.pong()
        let socket = try await opening.value
        task.inbox.continuation.yield("{\"type\":\"hello\"}")
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == "{\"type\":\"hello\"}")
    }

    @Test func aRefusedUpgradeIsReportedAsA401() async throws {
        let task = FakeTask()
        task.state.withLock { $0.status = 401 }
        let opening = Task { try await URLSessionRealtimeSocket.open(task, clock: ManualClock()) }
        var pings = task.pinged.stream.makeAsyncIterator()
        _ = await pings.next()
        task.pong(URLError(.badServerResponse))
        do {
            _ = try await opening.value
            Issue.record("opened")
        } catch let error as ChatException {
            #expect(error.httpStatus == 401)
        }
        #expect(task.state.current.cancelled)
    }

    @Test func aPongThatNeverComesEndsTheSocketAndItsTask() async throws {
        let clock = ManualClock()
        let task = FakeTask()
        let opening = Task { try await URLSessionRealtimeSocket.open(task, clock: clock) }
        var pings = task.pinged.stream.makeAsyncIterator()
        _ = await pings.next()
        task.pong()
        let socket = try await opening.value
        // The keepalive's wait, then its ping, unanswered until the pong's time is up.
        await clock.waitForSleepers(1)
        clock.advance(by: URLSessionRealtimeSocket.pingInterval)
        _ = await pings.next()
        await clock.waitForSleepers(1)
        clock.advance(by: URLSessionRealtimeSocket.pongTimeout)
        do {
            for try await _ in socket.messages {}
            Issue.record("the stream ended without an error")
        } catch let error as ChatException {
            #expect(error.errorCode == ChatException.internetUnavailable)
        }
        while !task.state.current.cancelled { await Task.yield() }
    }

    @Test func aClosedStreamCancelsItsTask() async throws {
        let task = FakeTask()
        let opening = Task { try await URLSessionRealtimeSocket.open(task, clock: ManualClock()) }
        var pings = task.pinged.stream.makeAsyncIterator()
        _ = await pings.next()
        task.pong()
        let socket = try await opening.value
        task.inbox.continuation.finish(throwing: URLError(.networkConnectionLost))
        await #expect(throws: ChatException.self) { for try await _ in socket.messages {} }
        while !task.state.current.cancelled { await Task.yield() }
    }
}
