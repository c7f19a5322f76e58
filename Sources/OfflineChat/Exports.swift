// The wire types the SDK's public API uses directly (ReceiverType, MessageCategory,
// CallStatus, Attachment, JSONValue, GroupType, GroupScope, …) come with `import OfflineChat`.
@_exported import ChatProtocol

@_exported import struct ChatCache.FileKeyStore
@_exported import class ChatCache.InMemoryKeyStore
// The cache's key storage: implement `KeyStore` to keep keys elsewhere (ChatConfig.keyStore).
@_exported import protocol ChatCache.KeyStore
@_exported import struct ChatCache.KeyStoreUnavailable

#if canImport(Security)
@_exported import struct ChatCache.KeychainKeyStore
#endif
