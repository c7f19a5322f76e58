import ChatTesting
import Foundation
import OfflineChatServerProcess
import Testing

@testable import OfflineChat

/// chatd over TLS (`--tls-cert`/`--tls-key`, a certificate made by `openssl` here) and the
/// SDK's Linux transports speaking `https` and `wss` to it.
@Suite(.timeLimit(.minutes(1))) struct TLSTests {
    /// A self-signed certificate for 127.0.0.1, and its key.
    static func makeCertificate() throws -> (certificate: URL, key: URL) {
        try ServerProcess.selfSignedCertificate(
            in: FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)"))
    }

    func client(_ server: LiveChatd, trusting certificate: URL?) throws -> (ChatClient, Recorder) {
        var config = ChatConfig(
            appID: "test", server: server.url,
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent(
                "sdk-test-\(UUID().uuidString)"),
            callbackQueue: DispatchQueue(label: "callbacks"), clock: ManualClock(),
            logger: StandardErrorLogger(minimumLevel: .error))
        config.trustedCertificates = certificate
        config.requestTimeout = 10
        let client = try ChatClient(config: config)
        let recorder = Recorder(queue: client.config.callbackQueue)
        client.addConnectionListener("c", recorder)
        client.addMessageListener("m", recorder)
        return (client, recorder)
    }

    @Test func theSDKSendsOverHTTPSAndHearsOverWSS() async throws {
        let (certificate, key) = try Self.makeCertificate()
        let server = try LiveChatd(arguments: ["--tls-cert", certificate.path, "--tls-key", key.path])
        #expect(server.url.scheme == "https")
        for uid in ["alice", "bob"] { _ = try server.admin(["user", "add", uid]) }
        let (alice, aliceEvents) = try client(server, trusting: certificate)
        let (bob, bobEvents) = try client(server, trusting: certificate)
        try await alice.login(uid: "alice", authToken: try server.admin(["token", "alice"]))
        try await bob.login(uid: "bob", authToken: try server.admin(["token", "bob"]))
        _ = await aliceEvents.next(where: { $0 == "connected" })
        _ = await bobEvents.next(where: { $0 == "connected" })  // the realtime socket is up, over wss
        let log = PhaseLog()
        alice.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "over TLS", receiverType: .user),
            onMessageSent: { log.push(.server([$0.id])) }, onError: log.error)
        guard case .server = await log.next() else {
            Issue.record("not sent over https")
            return
        }
        let heard = await bobEvents.next(where: { $0.hasPrefix("text:alice:over TLS") })
        #expect(heard.hasPrefix("text:alice:over TLS"), "bob hears it live, over wss")
    }

    /// Without the certificate trusted the SDK refuses the server: nothing is sent to it.
    @Test func anUntrustedCertificateIsRefused() async throws {
        let (certificate, key) = try Self.makeCertificate()
        let server = try LiveChatd(arguments: ["--tls-cert", certificate.path, "--tls-key", key.path])
        _ = try server.admin(["user", "add", "alice"])
        let (alice, _) = try client(server, trusting: nil)
        do {
            _ = try await alice.login(uid: "alice", authToken: try server.admin(["token", "alice"]))
            Issue.record("logged in over an untrusted certificate")
        } catch let error as ChatException {
            #expect(error.errorDescription.contains("certificate is not trusted"), "\(error)")
            #expect(error.errorCode == ChatException.secureConnectionFailed, "a setup error, not \"offline\"")
        }
    }
}
