#if os(Linux) || os(macOS)  // child processes: not on iOS
import Foundation

/// nats-server as chatd's cluster runs it, for tests: `scripts/nats.conf` on a free loopback
/// port (chatd's own account and user, no anonymous clients; TLS when given a certificate),
/// fresh secrets in a directory of its own, and the flags a chatd node needs to join
/// (`chatdArguments`: the url, the user, the password file and the bus key file).
public final class NatsServer: @unchecked Sendable {  // immutable after init; the process is ended in stop()
    public let process: Process
    public let port: Int
    /// `nats://127.0.0.1:PORT`, or `tls://…` when started with a certificate.
    public let url: String
    /// chatd's user and its password.
    public let user = "chatd"
    public let password: String
    /// The user of another account on the same server, and its password.
    public let otherUser = "other"
    public let otherPassword: String
    /// Files holding the password and the cluster's bus key (0600).
    public let passwordFile: URL
    public let busKeyFile: URL
    public let directory: URL

    /// Debian puts it in /usr/sbin.
    public static let binary = "/usr/sbin/nats-server"
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    /// The configuration template, in this checkout's `scripts`.
    static var template: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/nats.conf")
    }

    /// Starts nats-server on `port` (a free one when nil), speaking TLS with `tls`'s PEM files,
    /// with fresh secrets, or those of `earlier` (the same cluster's bus, restarted, or a second
    /// one its nodes also use).
    public init(
        port: Int? = nil, tls: (certificate: URL, key: URL)? = nil, sameSecretsAs earlier: NatsServer? = nil
    )
        throws
    {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("nats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.port = try port ?? Self.freePort()
        password = earlier?.password ?? Self.secret()
        otherPassword = earlier?.otherPassword ?? Self.secret()
        passwordFile = directory.appendingPathComponent("nats.password")
        busKeyFile = directory.appendingPathComponent("bus.key")
        try Self.writeSecret(password, to: passwordFile)
        try Self.writeSecret(earlier?.busKey ?? Self.secret(), to: busKeyFile)
        let tlsBlock = tls.map { "tls { cert_file: \"\($0.certificate.path)\", key_file: \"\($0.key.path)\" }" } ?? ""
        let configuration = try String(contentsOf: Self.template, encoding: .utf8)
            .replacingOccurrences(of: "@PORT@", with: "\(self.port)")
            .replacingOccurrences(of: "@TLS@", with: tlsBlock)
            .replacingOccurrences(of: "@PASSWORD@", with: password)
            .replacingOccurrences(of: "@OTHER_PASSWORD@", with: otherPassword)
        let file = directory.appendingPathComponent("nats.conf")
        try Self.writeSecret(configuration, to: file)
        let (process, output, _) = try ServerProcess.start(
            URL(fileURLWithPath: Self.binary), ["-c", file.path], errorsToo: true, readyWhen: "Server is ready")
        output.fileHandleForReading.readabilityHandler = { _ = $0.availableData }  // a full pipe would stop it
        self.process = process
        url = "\(tls == nil ? "nats" : "tls")://127.0.0.1:\(self.port)"
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    public func stop() { ServerProcess.end(process) }

    /// What a chatd node is started with to join this bus.
    public var chatdArguments: [String] {
        [
            "--nats", url, "--nats-user", user, "--nats-password-file", passwordFile.path, "--bus-key-file",
            busKeyFile.path
        ]
    }

    /// The bus key's text.
    public var busKey: String { (try? String(contentsOf: busKeyFile, encoding: .utf8)) ?? "" }

    /// 32 random bytes in hex.
    static func secret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    static func writeSecret(_ text: String, to file: URL) throws {
        guard
            FileManager.default.createFile(
                atPath: file.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else { throw ServerProcess.Failure("cannot write \(file.path)") }
    }

    /// A loopback port nobody listens on at this moment.
    public static func freePort() throws -> Int {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw ServerProcess.Failure("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
#endif
