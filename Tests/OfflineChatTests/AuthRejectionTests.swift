import ChatTesting
import Foundation
import OfflineChatProtocol
import Testing

@testable import OfflineChat

/// chatd stops accepting the session's token: whichever call meets the 401 ends the session
/// (its cache wiped, its queue discarded), reported once by the API client for every path.
@Suite(.timeLimit(.minutes(1))) struct AuthRejectionTests {
    /// A queued message whose send meets a revoked token (the realtime connection still up, so
    /// nothing else notices): before, it failed for good with `token_revoked` and the session
    /// went on, every other queued message failing the same way.
    @Test func aQueuedSendThatMeetsARevokedTokenEndsTheSession() async throws {
        let fake = FakeChatd()
        let alice = fake.addUser("alice")
        fake.addUser("bob")
        let config = SessionTasksTests.config(fake, clock: ManualClock())
        let (client, session) = try await SessionTasksTests.connectedClient(config, uid: "alice", token: alice)
        #expect(session.outbox != nil)
        fake.fail("POST", Endpoints.messages, status: 401, code: .tokenRevoked, message: "the auth token was revoked")
        let events = AsyncStream<String>.makeStream()
        client.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "after the revocation", receiverType: .user),
            onMessageSent: { _ in events.continuation.yield("sent") },
            onError: { events.continuation.yield("failed \($0.code)") })
        var heard = events.stream.makeAsyncIterator()
        let outcome = await heard.next()
        #expect(outcome == "failed \(ErrorCode.messageDiscarded)", "discarded with the session: \(outcome ?? "none")")
        #expect(client.getLoggedInUser() == nil, "the session ended")
        await session.tasks.end()
        #expect(!FileManager.default.fileExists(atPath: client.cacheDirectory(for: "alice").path), "its cache wiped")
    }

    /// A 401 from a media url elsewhere is that server's business: the session goes on.
    @Test func aRefusalFromAnotherServerEndsNothing() async throws {
        let fake = FakeChatd()
        let alice = fake.addUser("alice")
        let config = SessionTasksTests.config(fake, clock: ManualClock())
        let (client, session) = try await SessionTasksTests.connectedClient(config, uid: "alice", token: alice)
        let elsewhere = APIClient(
            baseURL: URL(string: "http://127.0.0.1:1")!, token: "t", transport: session.api.transport)
        let rejected = AsyncStream<Void>.makeStream()
        elsewhere.rejection.set { rejected.continuation.yield() }
        fake.fail("GET", "/v1/media/x", status: 401, code: .unauthorized)
        // chatd's own url through a client whose base is another server: not chatd's answer.
        _ = try? await elsewhere.download(fake.url.absoluteString + "/v1/media/x", maxBytes: 100)
        rejected.continuation.finish()
        var heard = rejected.stream.makeAsyncIterator()
        #expect(await heard.next() == nil, "nobody heard a rejection")
        #expect(client.getLoggedInUser()?.uid == "alice")
    }
}
