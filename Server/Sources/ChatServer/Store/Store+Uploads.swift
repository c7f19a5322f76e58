import OfflineChatProtocol
import OfflineChatSQLite

/// One upload: its own id (the url), the content-addressed file it shares with every upload
/// of the same bytes, who sent it, and the content type it was sent with.
public struct Upload: Sendable, Equatable {
    public let id: String
    /// The SHA-256 of the bytes: the file's name in the media directory.
    public let file: String
    public let uploader: String
    public let contentType: String
    public let size: Int64
}

extension Store {
    /// The upload id in `url` when it is chatd's own media url (`/v1/media/<id>`).
    static func ownUploadID(_ url: String) -> String? { Endpoints.mediaID(in: url) }

    /// Records an upload of `file` by `uid` and returns its new, random id; 403
    /// `quota_exceeded` when it would take `uid`'s uploads past `quota` bytes (0: no quota).
    /// Recorded before the bytes are written, so a sweep running meanwhile keeps the file.
    public func recordUpload(
        file: String, by uid: String, contentType: String, size: Int64, quota: Int64 = 0
    ) throws -> String {
        let id = Self.randomHex(bytes: 32)
        try write { db, _ in
            // A sweep forgetting the other uploads of these bytes (and removing the file) on another
            // connection finishes first; one starting later sees this row and keeps the file.
            // The uploader first: concurrent uploads of one user take turns at the quota (with
            // only the file locked, uploads of different bytes each saw the others' sizes
            // missing and together went up to twice over it).
            try db.lockRows("users", where: "uid", is: uid)
            try db.lockRows("uploads", where: "file", is: file)
            let held =
                try db.scalar("SELECT coalesce(sum(size), 0) FROM uploads WHERE uploader = ?", [uid], as: Int64.self)
                ?? 0
            if quota > 0 && held + size > quota {
                throw StoreError(
                    .quotaExceeded,
                    "your uploads hold \(held) of \(quota) bytes; this one needs \(size) more"
                        + " (delete messages with media, or wait for unsent uploads to expire)")
            }
            try db.run(
                "INSERT INTO uploads(id, file, uploader, content_type, size, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                [id, file, uid, contentType, size, stamp()])
        }
        return id
    }

    /// Upload `id` when `uid` may fetch it: their own, or named by a message they can read now
    /// (a conversation they are still in, no block between them and the sender of a direct
    /// message). nil otherwise, the same answer as for an unknown id: nobody learns which
    /// files exist.
    public func readableUpload(_ id: String, by uid: String) throws -> Upload? {
        try read { db in try Self.readableUpload(db, id, by: uid) }
    }

    static func readableUpload(_ db: any SQLDatabase, _ id: String, by uid: String) throws -> Upload? {
        guard let row = try db.queryFirst("SELECT file, uploader, content_type, size FROM uploads WHERE id = ?", [id])
        else { return nil }
        let upload = Upload(
            id: id, file: try row.get("file"), uploader: try row.get("uploader"),
            contentType: try row.get("content_type"), size: try row.get("size"))
        if upload.uploader == uid { return upload }
        for reference in try db.query("SELECT message_id FROM upload_refs WHERE upload_id = ?", [id]) {
            guard let message = try? readableMessage(db, id: try reference.get("message_id"), uid: uid) else {
                continue
            }
            if message.receiverType == .user, message.sender != uid, try blocked(db, uid, message.sender) { continue }
            return upload
        }
        return nil
    }

    /// Records that message `messageId` names the chatd upload in `attachment` (if it names
    /// one): 422 when the sender may not fetch that upload themselves.
    static func linkUpload(_ db: any SQLDatabase, _ attachment: Attachment?, to messageId: Int64, sender: String) throws
    {
        guard let url = attachment?.url, let id = ownUploadID(url) else { return }
        guard try readableUpload(db, id, by: sender) != nil else {
            throw StoreError.validation(
                "`attachment.url` names no upload you can read: upload the file first (POST \(Endpoints.media))")
        }
        try db.run(
            "INSERT INTO upload_refs(upload_id, message_id) VALUES (?, ?) ON CONFLICT DO NOTHING", [id, messageId])
    }

    /// Forgets uploads created before `cutoff` (epoch ms) that no message names, and calls
    /// `remove` for each file no upload uses any more. `remove` runs inside the transaction: an
    /// upload of the same bytes records its row first, so it either keeps the file or comes
    /// after the removal and writes it again. Returns how many uploads were forgotten.
    public func sweepUploads(createdBefore cutoff: Int64, remove: (String) -> Void) throws -> Int {
        try write { db, _ in
            let stale = try db.query(
                """
                SELECT id, file FROM uploads u
                WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM upload_refs r WHERE r.upload_id = u.id)
                """, [cutoff])
            var files = Set<String>()
            for row in stale {
                try db.run("DELETE FROM uploads WHERE id = ?", [try row.get("id") as String])
                files.insert(try row.get("file"))
            }
            for file in files where try db.scalar("SELECT 1 FROM uploads WHERE file = ?", [file], as: Int.self) == nil {
                remove(file)
            }
            return stale.count
        }
    }
}
