import Foundation
import OfflineChatLocking

/// Where the cache's encryption keys live, outside the cache: one small secret per account
/// (`<appID>/<uid>`). On Apple platforms the Keychain (`KeychainKeyStore`); on Linux a
/// private file per account (`FileKeyStore`); in tests `InMemoryKeyStore`.
public protocol KeyStore: Sendable {
    /// The stored secret, nil when there is none. Throws `KeyStoreUnavailable` when the store
    /// cannot answer right now (a locked Keychain): the caller retries.
    func load(account: String) throws -> Data?
    func save(_ secret: Data, account: String) throws
    /// Deleting what is not there is not an error.
    func delete(account: String) throws
}

/// The key store cannot be read or written right now; a later attempt may work.
public struct KeyStoreUnavailable: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Secrets kept in memory (tests; nothing survives the process).
public final class InMemoryKeyStore: KeyStore, Sendable {
    private let state = Locked((secrets: [String: Data](), failures: 0))

    /// Loads fail this many more times with `KeyStoreUnavailable` (to test the retries).
    public var failuresToSimulate: Int {
        get { state.withLock { $0.failures } }
        set { state.withLock { $0.failures = newValue } }
    }

    public init() {}

    public func load(account: String) throws -> Data? {
        try state.withLock {
            if $0.failures > 0 {
                $0.failures -= 1
                throw KeyStoreUnavailable("simulated: the key store is locked")
            }
            return $0.secrets[account]
        }
    }

    public func save(_ secret: Data, account: String) throws { state.withLock { $0.secrets[account] = secret } }
    public func delete(account: String) throws { _ = state.withLock { $0.secrets.removeValue(forKey: account) } }
}

/// One file per account (mode 0600) in a private directory (0700) that is not inside any
/// cache, written atomically (a temporary file renamed into place).
public struct FileKeyStore: KeyStore {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    public func load(account: String) throws -> Data? {
        let file = self.file(account)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        do { return try Data(contentsOf: file) } catch {
            throw KeyStoreUnavailable("cannot read the key file: \(error.localizedDescription)")
        }
    }

    public func save(_ secret: Data, account: String) throws {
        let files = FileManager.default
        try files.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try files.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        let temporary = directory.appendingPathComponent(".\(UUID().uuidString).tmp")
        guard files.createFile(atPath: temporary.path, contents: secret, attributes: [.posixPermissions: 0o600]) else {
            throw KeyStoreUnavailable("cannot write the key file")
        }
        if rename(temporary.path, file(account).path) != 0 {
            try? files.removeItem(at: temporary)
            throw KeyStoreUnavailable("cannot move the key file into place")
        }
    }

    public func delete(account: String) throws {
        let file = self.file(account)
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }

    /// Accounts are `<appID>/<uid>` from a safe alphabet; `/` becomes `.`.
    func file(_ account: String) -> URL {
        directory.appendingPathComponent(account.replacingOccurrences(of: "/", with: ".") + ".key")
    }
}
