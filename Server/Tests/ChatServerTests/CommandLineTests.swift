import ChatServer
import Foundation
import Testing

/// What `chatd`'s flags for deployment turn into, and the mistakes they refuse.
@Suite struct CommandLineTests {
    @Test func listenTakesAnIPv4OrIPv6AddressAndAPort() throws {
        let (_, v4) = try ChatdArguments.parse(["--listen", "0.0.0.0:8443"])
        #expect(v4.host == "0.0.0.0" && v4.port == 8443)
        let (_, v6) = try ChatdArguments.parse(["--listen", "[::1]:9000"])
        #expect(v6.host == "::1" && v6.port == 9000)
        let (_, byDefault) = try ChatdArguments.parse([])
        #expect(byDefault.host == "127.0.0.1" && byDefault.port == 8080, "loopback unless told")
        for bad in ["8080", "127.0.0.1", "127.0.0.1:http", "[::1]:99999"] {
            #expect(throws: UsageError.self, "\(bad)") { try ChatdArguments.parse(["--listen", bad]) }
        }
    }

    @Test func tlsNeedsBothTheCertificateAndTheKey() throws {
        let (_, tls) = try ChatdArguments.parse(["--tls-cert", "c.pem", "--tls-key", "k.pem"])
        #expect(tls.tlsCertificate?.lastPathComponent == "c.pem" && tls.tlsKey?.lastPathComponent == "k.pem")
        #expect(throws: UsageError.self) { try ChatdArguments.parse(["--tls-cert", "c.pem"]) }
        #expect(!(try ChatdArguments.parse([]).1.allowQueryToken))
    }

    /// An address that is not one (or not this machine's) stops chatd with a clear message.
    @Test func anAddressThatDoesNotBindIsAClearError() throws {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chatd-bind-\(UUID().uuidString)")
        configuration.host = "example.invalid"
        configuration.port = 0
        let server = try ChatServer(configuration: configuration)
        #expect(throws: HTTPError.self) { try server.start() }
    }
}
