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

    /// An admin key shorter than 32 bytes is refused at start, saying how to make one.
    @Test func aShortAdminKeyIsRefused() throws {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chatd-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: configuration.dataDirectory) }
        configuration.adminKey = "admin"
        let refused = #expect(throws: StoreError.self) { try ChatServer(configuration: configuration) }
        #expect(refused?.description.contains("at least 32 bytes") == true)
        configuration.adminKey = String(repeating: "k", count: 32)
        _ = try ChatServer(configuration: configuration)
    }

    /// A bus needs the cluster's secret (sealing every frame), takes NATS credentials from the
    /// environment or files, and never repeats a password written into its url.
    @Test func theBusNeedsASecretAndKeepsCredentialsOutOfSight() throws {
        let needsSecret = #expect(throws: UsageError.self) { try ChatdArguments.parse(["--nats", "nats://n:4222"]) }
        #expect(needsSecret?.description.contains("CHATD_BUS_KEY") == true)
        let (_, fromFile) = try ChatdArguments.parse([
            "--nats", "tls://n:4222", "--bus-key-file", "bus.key", "--nats-user", "chatd",
            "--nats-password-file", "nats.password", "--nats-ca", "ca.pem"
        ])
        #expect(fromFile.bus?.secretFile == "bus.key" && fromFile.bus?.passwordFile == "nats.password")
        let (_, fromEnvironment) = try ChatdArguments.parse(
            ["--nats", "nats://n:4222", "--nats-user", "chatd"],
            environment: ["CHATD_BUS_KEY": "k", "CHATD_NATS_PASSWORD": "p", "CHATD_NATS_TOKEN": "t"])
        #expect(fromEnvironment.bus?.secret == "k" && fromEnvironment.bus?.password == "p")
        #expect(fromEnvironment.bus?.token == "t")
        let lonely = #expect(throws: UsageError.self) { try ChatdArguments.parse(["--nats-user", "chatd"]) }
        #expect(lonely?.description == "--nats-user goes with --nats")
        let badURL = #expect(throws: UsageError.self) {
            try ChatdArguments.parse(["--nats", "http://user:hunter2@n:4222"], environment: ["CHATD_BUS_KEY": "k"])
        }
        #expect(badURL.map { !$0.description.contains("hunter2") && $0.description.contains("***") } == true)
        #expect(throws: UsageError.self) {
            try ChatdArguments.parse(
                ["--nats", "nats://n:4222", "--nats-cert", "c.pem"], environment: ["CHATD_BUS_KEY": "k"])
        }
    }

    /// A secret on the command line is visible to every local account: chatd warns, naming the
    /// flag and where to put the secret instead, and never repeats the secret itself.
    @Test func secretsOnTheCommandLineAreWarnedAboutNeverPrinted() throws {
        let arguments = [
            "--admin-key", "adminsecret", "--database", "postgres://chatd:dbsecret@db:5432/chatd",
            "--nats", "nats://chatd:natssecret@n:4222"
        ]
        let (_, configuration) = try ChatdArguments.parse(arguments, environment: ["CHATD_BUS_KEY": "k"])
        let warnings = ChatdArguments.warnings(arguments, configuration)
        #expect(warnings.count == 3)
        #expect(warnings[1].hasPrefix("--nats nats://***@n:4222") && warnings[2].hasPrefix("--database"))
        #expect(!warnings.joined().contains("dbsecret") && !warnings.joined().contains("natssecret"))
        #expect(!warnings.joined().contains("adminsecret"))
        let quiet = ["--database", "postgresql:///chatd?host=/run/postgresql", "--nats", "nats://n:4222"]
        let (_, fine) = try ChatdArguments.parse(quiet, environment: ["CHATD_BUS_KEY": "k"])
        #expect(ChatdArguments.warnings(quiet, fine).isEmpty)
        let (_, fromEnvironment) = try ChatdArguments.parse(
            [], environment: ["CHATD_DATABASE": "postgres://chatd:dbsecret@db/chatd"])
        #expect(ChatdArguments.warnings([], fromEnvironment).isEmpty, "the environment is where it belongs")
        let open = ["--listen", "0.0.0.0:8080"]
        #expect(ChatdArguments.warnings(open, try ChatdArguments.parse(open).1).first?.contains("in the clear") == true)
        let tls = open + ["--tls-cert", "c.pem", "--tls-key", "k.pem"]
        #expect(ChatdArguments.warnings(tls, try ChatdArguments.parse(tls).1).isEmpty)
        let openConsole = ["--admin-listen", "10.0.0.5:9090"]
        #expect(
            ChatdArguments.warnings(openConsole, try ChatdArguments.parse(openConsole).1).first?.hasPrefix(
                "--admin-listen 10.0.0.5 without --tls-cert") == true)
        let tunnelled = ["--admin-listen", "localhost:9090"]
        let (_, local) = try ChatdArguments.parse(tunnelled)
        #expect(ChatdArguments.warnings(tunnelled, local).isEmpty)
        #expect(local.adminListen?.host == "127.0.0.1" && local.adminListen?.port == 9090)
        #expect(throws: UsageError.self) { try ChatdArguments.parse(["--admin-listen", "9090"]) }
    }
}
