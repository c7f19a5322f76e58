#if canImport(Security)
import Foundation
import Security

/// The iOS / macOS Keychain: a generic password per account, available after the first
/// unlock, never synced or restored to another device.
public struct KeychainKeyStore: KeyStore {
    public let service: String

    public init(service: String = "OfflineChat.cache-key") {
        self.service = service
    }

    private func query(_ account: String) -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account
        ]
    }

    public func load(account: String) throws -> Data? {
        var query = query(account)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: AnyObject?
        switch SecItemCopyMatching(query as CFDictionary, &result) {
        case errSecSuccess: return result as? Data
        case errSecItemNotFound: return nil
        case let status: throw KeyStoreUnavailable("the Keychain answered \(status)")
        }
    }

    public func save(_ secret: Data, account: String) throws {
        try delete(account: account)
        var item = query(account)
        item[kSecValueData as String] = secret
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        item[kSecAttrSynchronizable as String] = false
        let status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else { throw KeyStoreUnavailable("the Keychain refused the key (\(status))") }
    }

    public func delete(account: String) throws {
        let status = SecItemDelete(query(account) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw KeyStoreUnavailable("the Keychain answered \(status)")
        }
    }
}
#endif
