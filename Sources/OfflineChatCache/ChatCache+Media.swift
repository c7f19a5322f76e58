import Foundation
import OfflineChatSQLite

/// A queued media file is larger than the cache's whole byte budget.
public struct MediaTooLarge: Error, Sendable {
    public let size: Int64
    public let limit: Int64
}

/// Media files in the cache's `media/` folder: downloads are named `<message id>-<name>` and
/// leave with their message; files of queued sends are named `outbox-<muid>-<name>` (never
/// evicted) until the send succeeds and they become the sent message's file.
extension ChatCache {
    /// Where a message's downloaded file lives (whether or not it is there yet).
    public func mediaFile(messageId: Int64, name: String) -> URL {
        mediaDirectory.appendingPathComponent("\(messageId)-\(Self.safeName(name))")
    }

    /// Stores a downloaded file for a message (0600), then applies the size limit.
    public func storeMedia(_ data: Data, messageId: Int64, name: String) throws -> URL {
        let file = mediaFile(messageId: messageId, name: name)
        _ = mediaBytes()  // counted before the file changes
        let replaced = Self.fileSize(file)
        guard FileManager.default.createFile(atPath: file.path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw SQLiteError(code: .cantOpen, message: "cannot write a media file")
        }
        mediaTotal.withLock { total in total = total.map { $0 - replaced + Int64(data.count) } }
        try write { _, _ in }
        return file
    }

    /// Copies a file to send into the media folder (0600), so the send survives the app
    /// deleting or changing the original. Refuses a file larger than the byte budget
    /// (`MediaTooLarge`); other failures are the copy's own errors. Returns the copy.
    public func copyForOutbox(_ source: URL, muid: String, name: String) throws -> URL {
        let size = Self.fileSize(source)
        if limits.maxStorageSize > 0 && size > limits.maxStorageSize {
            throw MediaTooLarge(size: size, limit: limits.maxStorageSize)
        }
        let copy = mediaDirectory.appendingPathComponent("outbox-\(Self.safeName(muid))-\(Self.safeName(name))")
        _ = mediaBytes()
        try? FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: source, to: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: copy.path)
        let copied = Self.fileSize(copy)
        mediaTotal.withLock { total in total = total.map { $0 + copied } }
        try write { _, _ in }
        return copy
    }

    /// A sent message takes over its queued file (a rename: the byte count stays).
    @discardableResult
    public func adoptQueuedMedia(_ path: String, messageId: Int64, name: String) -> URL? {
        let target = mediaFile(messageId: messageId, name: name)
        do {
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.moveItem(atPath: path, toPath: target.path)
            return target
        } catch {
            return nil
        }
    }

    /// Deletes queued files whose sends were dropped.
    public func discardQueuedMedia(_ paths: [String]) {
        for file in forgetMedia(paths.map { URL(fileURLWithPath: $0) }) {
            try? FileManager.default.removeItem(at: file)
        }
    }

    static func safeName(_ name: String) -> String {
        String(name.map { $0 == "/" || $0 == "\0" ? "_" : $0 }.prefix(120))
    }

    /// A queued file's path as the outbox stores it: its name within the media folder, so the
    /// queue survives the folder's move (iOS moves an app's container on an update). A path
    /// outside the folder is kept whole.
    static func storedMediaPath(_ path: String, in media: URL) -> String {
        let folder = media.standardizedFileURL.path + "/"
        let file = URL(fileURLWithPath: path).standardizedFileURL.path
        return file.hasPrefix(folder) ? String(file.dropFirst(folder.count)) : path
    }

    /// The path of a queued file the outbox stored as `stored` (see `storedMediaPath`), in
    /// `media` as it is now (nil: as stored).
    static func mediaPath(stored: String, in media: URL?) -> String {
        guard let media, !stored.hasPrefix("/") else { return stored }
        return media.appendingPathComponent(stored).path
    }
}
