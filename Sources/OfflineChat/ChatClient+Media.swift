import Foundation
import OfflineChatCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ChatClient {
    /// Database and media bytes of the logged-in user's cache on disk (0 without a cache).
    public func getCacheSize() -> Int64 { session.current?.cache?.sizeOnDisk() ?? 0 }

    /// Downloads a media message's file into the cache's media folder (once) and returns the
    /// message with `localPath` set. The file counts toward `maxStorageSize` and is evicted
    /// with its conversation. Media files are not encrypted (see docs/CACHE.md).
    public func downloadMedia(_ message: MediaMessage) async throws -> MediaMessage {
        let current = try requireSession()
        guard let attachment = message.attachment, !attachment.url.isEmpty else {
            throw ChatException.invalid("message \(message.id) has no attachment to download")
        }
        guard let cache = current.cache else {
            throw ChatException(.offlineDisabled, "media is kept in the offline cache; enable offline support")
        }
        // A file url names a file on this device: never opened on a message's word (a sender
        // could name the app's own files). A queued send's file is already in the cache.
        if URL(string: attachment.url)?.isFileURL ?? true || attachment.url.lowercased().hasPrefix("file:") {
            if message.id == 0, let local = message.localPath { return message.copy(localPath: local) }
            throw ChatException.invalid(
                "message \(message.id) names a local file (\(attachment.url)); only server media is downloaded")
        }
        let target = cache.mediaFile(messageId: message.id, name: attachment.name)
        if !FileManager.default.fileExists(atPath: target.path) {
            let limit =
                attachment.size > 0 ? min(attachment.size, config.maxMediaDownloadSize) : config.maxMediaDownloadSize
            let data = try await current.api.download(attachment.url, maxBytes: limit)
            do { _ = try cache.storeMedia(data, messageId: message.id, name: attachment.name) } catch {
                throw ChatException(.cacheFailure, "cannot store the file: \(error)")
            }
        }
        return message.copy(localPath: FileManager.default.fileExists(atPath: target.path) ? target.path : nil)
    }

    /// Fills `localPath` on media messages whose file is in the cache.
    func withLocalPaths(_ messages: [BaseMessage], cache: ChatCache?) -> [BaseMessage] {
        guard let cache else { return messages }
        for case let media as MediaMessage in messages {
            guard let name = media.attachment?.name else { continue }
            let file = cache.mediaFile(messageId: media.id, name: name)
            if FileManager.default.fileExists(atPath: file.path) { media.localPath = file.path }
        }
        return messages
    }
}

extension MediaMessage {
    /// This message as a new object with `localPath` set (delivered messages are never changed).
    func copy(localPath: String?) -> MediaMessage {
        let copy = BaseMessage.make(payload, source: source) as! MediaMessage
        copy.localMessageId = localMessageId
        copy.messageStatus = messageStatus
        copy.localPath = localPath
        return copy
    }
}
