// The wire types the SDK's public API uses directly (ReceiverType, MessageCategory,
// CallStatus, Attachment, JSONValue, GroupType, GroupScope, …) come with `import OfflineChat`.
@_exported import OfflineChatProtocol

@_exported import struct OfflineChatCache.FileKeyStore
@_exported import class OfflineChatCache.InMemoryKeyStore
// The cache's key storage: implement `KeyStore` to keep keys elsewhere (ChatConfig.keyStore).
@_exported import protocol OfflineChatCache.KeyStore
@_exported import struct OfflineChatCache.KeyStoreUnavailable

#if canImport(Security)
@_exported import struct OfflineChatCache.KeychainKeyStore
#endif
