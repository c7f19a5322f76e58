import Foundation

/// How a node reaches the bus (nats-server) and proves itself there, and the secret the
/// cluster's nodes seal their frames with (`BusSeal`). Secrets come from the environment or
/// from files, never only from the command line (where `ps` shows them), and are never printed.
public struct BusSettings: Sendable, Equatable {
    /// `nats://host:port` or `tls://host:port`; several, comma-separated, for a NATS cluster.
    public var url: String
    /// NATS user and password (`--nats-user`, `CHATD_NATS_PASSWORD` or `--nats-password-file`).
    public var user: String?
    public var password: String?
    public var passwordFile: String?
    /// A NATS token (`CHATD_NATS_TOKEN` or `--nats-token-file`).
    public var token: String?
    public var tokenFile: String?
    /// A `.creds` file: a user JWT and its NKey seed, as `nsc` writes them (`--nats-creds`).
    public var credentialsFile: String?
    /// PEM certificates of the CA that signed nats-server's certificate (`--nats-ca`); TLS is
    /// used with it, or with a `tls://` url (then against the system's trust store).
    public var caFile: String?
    /// A client certificate and its key, for a nats-server that verifies its clients.
    public var certificateFile: String?
    public var keyFile: String?
    /// The secret every node of the cluster shares (`CHATD_BUS_KEY` or `--bus-key-file`).
    public var secret: String?
    public var secretFile: String?

    public init(url: String) { self.url = url }

    /// Whether the connection speaks TLS.
    var usesTLS: Bool { url.split(separator: ",").contains { $0.hasPrefix("tls://") } || caFile != nil }

    /// `url` with any user and password in it replaced by `***` (what logs and errors show).
    var redactedURL: String {
        url.split(separator: ",", omittingEmptySubsequences: false).map(Log.redacted).joined(separator: ",")
    }

    /// A user or password written into the url itself (`nats://user:pass@host`).
    var urlHoldsCredentials: Bool { redactedURL != url }

    /// The bus secret's bytes: the variable's value, or the file's contents without the
    /// newline an editor leaves.
    func resolvedSecret() throws -> [UInt8] {
        guard let text = try secret ?? secretFile.map({ try Self.read($0, what: "the bus key file") }) else {
            throw StoreError.unavailable(Self.secretMissing)
        }
        return Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
    }

    static let secretMissing =
        "--nats needs the secret the cluster's nodes share: CHATD_BUS_KEY or --bus-key-file FILE (openssl rand -hex 32)"

    /// The password, from the variable or its file.
    func resolvedPassword() throws -> String? {
        try password ?? passwordFile.map { try Self.read($0, what: "the NATS password file") }
    }

    /// The token, from the variable or its file.
    func resolvedToken() throws -> String? {
        try token ?? tokenFile.map { try Self.read($0, what: "the NATS token file") }
    }

    /// A secret file's contents, trimmed; the error names the file, never what is in it.
    static func read(_ path: String, what: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw StoreError.unavailable("cannot read \(what) \(path)")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
