import ChatTesting
import Foundation
import OfflineChatLocking
import Testing

@testable import OfflineChat

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport failure says what happened: only "no network" is `ERROR_INTERNET_UNAVAILABLE`
/// (for a send: queued, not failed); a connection that cannot be secured, or a URL the
/// platform refuses, is a setup error the app must hear of.
@Suite(.timeLimit(.minutes(1))) struct TransportErrorTests {
    @Test func urlErrorsMapToWhatHappened() {
        let cases: [(URLError.Code, String)] = [
            (.notConnectedToInternet, ChatException.internetUnavailable),
            (.timedOut, ChatException.internetUnavailable),
            (.networkConnectionLost, ChatException.internetUnavailable),
            (.cannotConnectToHost, ChatException.internetUnavailable),
            (.serverCertificateUntrusted, ChatException.secureConnectionFailed),
            (.serverCertificateHasBadDate, ChatException.secureConnectionFailed),
            (.serverCertificateHasUnknownRoot, ChatException.secureConnectionFailed),
            (.secureConnectionFailed, ChatException.secureConnectionFailed),
            (.appTransportSecurityRequiresSecureConnection, ChatException.insecureConnectionRefused),
            (.unsupportedURL, ChatException.invalidArgument)
        ]
        for (code, expected) in cases {
            #expect(HTTPTransports.failure(URLError(code)).errorCode == expected, "\(code)")
        }
    }

    /// Answers every message send with a connection that cannot be secured; the rest goes on.
    final class UntrustedSends: HTTPTransport {
        let inner: any HTTPTransport
        init(_ inner: any HTTPTransport) { self.inner = inner }
        func send(
            method: String, url: URL, headers: [String: String], body: Data?, maxBytes: Int
        ) async throws -> HTTPAnswer {
            if method == "POST" && url.path == Endpoints.messages {
                throw HTTPTransports.failure(URLError(.serverCertificateUntrusted))
            }
            return try await inner.send(method: method, url: url, headers: headers, body: body, maxBytes: maxBytes)
        }
    }

    /// Such a send is not "queued until the network returns" for ever: it is tried a few
    /// times on the backoff, then fails with the code that says why.
    @Test func aSendThatCannotBeSecuredFailsWithItsOwnCodeAfterItsAttempts() async throws {
        let fake = FakeChatd()
        let clock = ManualClock()
        let token = fake.addUser("alice")
        fake.addUser("bob")
        var config = SessionTasksTests.config(fake, clock: clock)
        config.httpTransport = UntrustedSends(config.httpTransport!)
        let (client, _) = try await SessionTasksTests.connectedClient(config, uid: "alice", token: token)
        let failure = Locked<ChatException?>(nil)
        client.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "hi", receiverType: .user), onMessageSent: { _ in },
            onError: { error in failure.withLock { $0 = error } })
        // Each backoff passes on the clock until the outbox gives up (then nothing waits on it).
        while client.getPendingMessages().first?.messageStatus != .failed {
            if let next = clock.nextDeadline { clock.advance(by: next) }
            await Task.yield()
        }
        while failure.current == nil { await Task.yield() }
        #expect(failure.current?.errorCode == ChatException.secureConnectionFailed)
        #expect(client.getPendingMessages().first?.messageStatus == .failed)
        #expect(fake.messages.isEmpty)
    }
}
