import ChatCache
import Foundation
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
            throw ChatException(errorCode: ChatException.offlineDisabled, errorDescription: "media is kept in the offline cache; enable offline support")
        }
        let target = cache.mediaFile(messageId: message.id, name: attachment.name)
        if !FileManager.default.fileExists(atPath: target.path) {
            let data: Data
            if let local = URL(string: attachment.url), local.isFileURL {
                do { data = try Data(contentsOf: local) } catch { throw ChatException.invalid("cannot read \(local.path)") }
            } else {
                data = try await current.api.download(attachment.url)
            }
            do { _ = try cache.storeMedia(data, messageId: message.id, name: attachment.name) } catch {
                throw ChatException(errorCode: ChatException.cacheFailure, errorDescription: "cannot store the file: \(error)")
            }
        }
        let copy = BaseMessage.make(message.payload, source: message.source) as! MediaMessage
        copy.localPath = FileManager.default.fileExists(atPath: target.path) ? target.path : nil
        return copy
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
