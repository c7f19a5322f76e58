import Foundation
import OfflineChatCache
import OfflineChatProtocol
import OfflineChatSQLite
import Testing

/// Queued media survive their cache folder's move: iOS moves an app's container on an update,
/// and every absolute path the outbox kept would then name a file that is not there.
@Suite struct QueuedMediaTests {
    /// A cache with one media send queued (its file copied into the cache), then closed; returns
    /// the cache's folder and the copy's file name.
    func queuedMediaCache() throws -> (folder: URL, name: String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("media-move-\(UUID().uuidString)")
        let folder = root.appendingPathComponent("before/a")
        let cache = try ChatCache(directory: folder, uid: "a", clock: { 1_000 })
        let source = root.appendingPathComponent("photo.jpg")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data("jpeg bytes".utf8).write(to: source)
        let copy = try cache.copyForOutbox(source, muid: "queued-1", name: "photo.jpg")
        var shown = message(0, in: "a~b", from: "a")
        shown.muid = "queued-1"
        let request = SendMessageRequest(muid: "queued-1", receiver: "b", text: "a photo")
        _ = try cache.enqueue(request, showing: shown, mediaPath: copy.path, maxPending: 10)
        #expect(try cache.outboxItems().first?.mediaPath == copy.path)
        cache.close()
        return (folder, copy.lastPathComponent)
    }

    /// Moves `folder` elsewhere (as iOS moves the container) and opens the cache there.
    func moved(_ folder: URL) throws -> ChatCache {
        let moved = folder.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("after-\(UUID().uuidString)/a")
        try FileManager.default.createDirectory(
            at: moved.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder, to: moved)
        return try ChatCache(directory: moved, uid: "a", clock: { 2_000 })
    }

    @Test func aMovedCacheFolderStillFindsItsQueuedFiles() throws {
        let (folder, name) = try queuedMediaCache()
        let cache = try moved(folder)
        let path = try #require(try cache.outboxItems().first?.mediaPath)
        #expect(path == cache.mediaDirectory.appendingPathComponent(name).path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("jpeg bytes".utf8))
    }

    @Test func aPathStoredWholeByAnEarlierVersionIsFoundInTheMovedFolder() throws {
        let (folder, name) = try queuedMediaCache()
        // As the cache before schema v8 kept it: the whole path, in a folder that is gone now.
        let db = try Connection(path: folder.appendingPathComponent("cache.sqlite").path)
        try db.run("UPDATE outbox SET media_path = ?", ["/var/mobile/Containers/Data/OLD/Library/chat/a/media/\(name)"])
        try db.execute("PRAGMA user_version = 7")
        try db.close()
        let cache = try moved(folder)
        let path = try #require(try cache.outboxItems().first?.mediaPath)
        #expect(path == cache.mediaDirectory.appendingPathComponent(name).path)
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
