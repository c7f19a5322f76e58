import Foundation
import OfflineChatServerProcess
import Testing

/// chatd's own TLS takes TLS 1.2 and 1.3 with forward-secret AEAD suites only (the second
/// review found 1.0, 1.1, CBC with SHA-1 and static RSA accepted), tried with `openssl s_client`
/// offering each old thing on its own; `--tls-priorities` sets another policy.
@Suite struct TLSPolicyTests {
    /// Whether a handshake offering only what `options` allow completes.
    static func handshake(_ port: Int, _ options: [String]) throws -> Bool {
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["s_client", "-connect", "127.0.0.1:\(port)", "-brief"] + options
        openssl.standardInput = FileHandle.nullDevice
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        return ServerProcess.waitForExit(openssl) == 0
    }

    /// What an old client offers, each alone (the security level lowered so that OpenSSL's own
    /// client is willing to offer it).
    static let old: [String: [String]] = [
        "TLS 1.0": ["-tls1", "-cipher", "DEFAULT:@SECLEVEL=0"],
        "TLS 1.1": ["-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"],
        "static RSA": ["-tls1_2", "-cipher", "AES128-GCM-SHA256:@SECLEVEL=0"],
        "CBC with SHA-1": ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA:@SECLEVEL=0"]
    ]

    @Test func onlyModernForwardSecretTLSIsAccepted() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try ServerProcess.selfSignedCertificate(in: directory)
        let tls = ["--tls-cert", files.certificate.path, "--tls-key", files.key.path]
        let server = try LiveServer(arguments: tls)
        for (name, options) in Self.old { #expect(try !Self.handshake(server.port, options), "\(name) refused") }
        #expect(try Self.handshake(server.port, ["-tls1_2"]), "TLS 1.2 with ECDHE and AES-GCM")
        #expect(try Self.handshake(server.port, ["-tls1_3"]))

        // The same client against GnuTLS's own defaults: the old things were taken.
        let permissive = try LiveServer(arguments: tls + ["--tls-priorities", "NORMAL:+VERS-TLS1.1:+VERS-TLS1.0"])
        for (name, options) in Self.old {
            #expect(try Self.handshake(permissive.port, options), "\(name) taken by NORMAL: the probe can tell")
        }
    }
}
