// The wire types the SDK's public API uses directly (ReceiverType, MessageCategory,
// CallStatus, Attachment, JSONValue, GroupType, GroupScope, …) come with `import OfflineChat`.
@_exported import ChatProtocol
