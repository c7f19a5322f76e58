import Foundation
import OfflineChatProtocol
import OfflineChatServerProcess
import OfflineChatWebSocket
import Testing

@Suite struct ShutdownTests {
    /// SIGTERM while sends are in flight: every send chatd acknowledged is stored, the process
    /// exits 0, and the database is closed cleanly (its write-ahead log checkpointed away).
    /// A harness that dies closes chatd's standard input: with --stop-on-stdin-eof (the test
    /// servers use it) chatd then shuts down as on SIGTERM instead of outliving its tests.
    @Test func closingStandardInputStopsAChatdThatWasAskedTo() async throws {
        let server = try LiveServer()
        _ = try await server.user("alice")
        try server.lifeline.fileHandleForWriting.close()
        #expect(ServerProcess.waitForExit(server.process) == 0)
        let output = String(decoding: server.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(output.contains("shutting down") && output.contains("stopped"))
    }

    @Test func sigtermFinishesInFlightRequestsAndClosesTheDatabase() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let (socket, _) = try server.realtime(alice)
        let acknowledged = try await withThrowingTaskGroup(of: MessagePayload?.self) { group in
            for index in 0..<60 {
                group.addTask {
                    try? await server.request(
                        "POST", Endpoints.messages, token: alice,
                        json: SendMessageRequest(muid: "s\(index)", receiver: "bob", text: "\(index)")
                    )
                    .decode(MessagePayload.self)
                }
            }
            group.addTask {
                // Terminate while the sends are still arriving.
                _ = server.stop()
                return nil
            }
            return try await group.reduce(into: [MessagePayload]()) { if let message = $1 { $0.append(message) } }
        }
        #expect(server.stop() == 0, "its exit status (asked again: it has exited)")
        #expect(
            !FileManager.default.fileExists(
                atPath: server.dataDirectory.appendingPathComponent("chatd.sqlite-wal").path))
        // The realtime socket was closed with "going away" (or found closed).
        var closeCode: CloseCode?
        while closeCode == nil {
            if case .close(let code, _) = try socket.receive() { closeCode = code }
        }
        #expect(closeCode == .goingAway || closeCode == .abnormal)

        guard !acknowledged.isEmpty else { return }
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        let stored = try await restarted.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages?limit=100",
            token: try await restarted.token("alice"))
        let ids = Set(try stored.decode([MessagePayload].self).map(\.id))
        #expect(Set(acknowledged.map(\.id)).isSubset(of: ids))
    }

    /// A client that stops in the middle of its request does not hold a shutdown past the
    /// grace: chatd closes it and exits.
    @Test func sigtermDoesNotWaitForAStalledRequestPastTheGrace() async throws {
        let server = try LiveServer(arguments: ["--shutdown-grace", "0.5"])
        let token = try await server.user("alice")
        let fd = try Socket.connect(host: "127.0.0.1", port: Int(server.port))
        defer { Socket.close(fd) }
        try Socket.writeAll(
            fd,
            Array(
                """
                POST \(Endpoints.messages) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\
                Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"muid":
                """.utf8))
        _ = try await server.request("GET", Endpoints.health)  // the stalled request has been read by now
        let started = Date()
        #expect(server.stop() == 0)
        #expect(Date().timeIntervalSince(started) < 5, "the stalled request held the shutdown")
    }
}
