import ChatTesting
import Foundation
import OfflineChatLocking
import Testing

@testable import OfflineChat

/// The connection's reporting lock covers only the status report: what a drop does to the
/// cache runs outside it, so a slow cache write cannot hold up `stop()` (a logout, a session
/// replaced) behind it.
@Suite(.timeLimit(.minutes(1))) struct RealtimeConnectionTests {
    /// Hands out sockets whose stream ends at once: every connection drops right after opening.
    final class DroppingTransport: RealtimeTransport {
        struct Socket: RealtimeSocket {
            var messages: AsyncThrowingStream<String, any Error> { AsyncThrowingStream { $0.finish() } }
            func send(_ text: String) throws {}
            func close() {}
        }
        func connect(to url: URL, token: String) async throws -> any RealtimeSocket { Socket() }
    }

    @Test func aSlowDropHandlerDoesNotHoldUpStop() async throws {
        let config = ChatConfig(
            appID: "drop", server: URL(string: "http://127.0.0.1:9")!,
            storageDirectory: FileManager.default.temporaryDirectory, callbackQueue: DispatchQueue(label: "drop"),
            clock: ManualClock())
        let connection = RealtimeConnection(
            url: URL(string: "ws://127.0.0.1:9/v1/realtime")!, token: "t", transport: DroppingTransport(),
            config: config)
        let statuses = Locked<[ConnectionStatus]>([])
        let inDrop = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        let dropFinished = Locked(false)
        let tasks = SessionTasks()
        connection.start(
            RealtimeConnection.Handlers(
                status: { status in statuses.withLock { $0.append(status) } },
                dropped: {
                    // A cache write that takes its time (a busy disk, a long transaction).
                    inDrop.continuation.yield()
                    var released = release.stream.makeAsyncIterator()
                    _ = await released.next()
                    dropFinished.withLock { $0 = true }
                },
                envelope: { _ in }, unreadable: {}, settled: {}, shouldRetry: { false }),
            in: tasks)
        var entered = inDrop.stream.makeAsyncIterator()
        _ = await entered.next()
        #expect(statuses.current == [.connecting, .connected, .disconnected], "the drop was reported first")

        // The stop returns while the drop's work is still under way (it waits for nothing).
        #expect(connection.stop() == false, "already disconnected")
        #expect(!dropFinished.current, "stop did not wait for the drop's work")
        #expect(connection.status == .disconnected)
        release.continuation.yield()
        await tasks.end()
        #expect(dropFinished.current)
        #expect(statuses.current == [.connecting, .connected, .disconnected], "nothing reported after the stop")
    }
}
