import CCrypto
import Foundation

/// Uploaded media files, content-addressed: a file's id is the SHA-256 of its bytes, so an
/// upload repeated after a lost answer (or by a restarted client) stores nothing new and
/// answers the same id. Files live in `directory` beside a small `.type` sidecar holding the
/// content type they were first uploaded with; writes go to a temporary name, are synced to
/// disk and renamed into place (the directory synced too), so a reader never sees half a file
/// and a crash leaves the old state or the new. A file is checked against its id before it is
/// first served: a torn one (from a crash of an older chatd, or a damaged disk) is never
/// served, and the next upload of the right bytes writes it again.
public struct MediaStore: Sendable {
    public let directory: URL
    /// Ids whose file was checked against its hash since start (files never change after).
    private let verified = Verified()

    final class Verified: @unchecked Sendable {  // `ids` under `lock`
        let lock = NSLock()
        var ids = Set<String>()
    }

    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// Stores `bytes` (once) and returns their id.
    public func store(_ bytes: [UInt8], contentType: String) throws -> String {
        let id = Self.sha256Hex(bytes)
        let file = url(id)
        if !isIntact(id) {
            try? FileManager.default.removeItem(at: file)  // torn: the right bytes are here now
            try write(Data(contentType.utf8), to: url(id, suffix: ".type"))
            try write(Data(bytes), to: file)
        }
        return id
    }

    /// Whether `id`'s file is there and holds the bytes its name is the hash of.
    private func isIntact(_ id: String) -> Bool {
        if verified.lock.withLock({ verified.ids.contains(id) }) { return true }
        guard let bytes = FileManager.default.contents(atPath: url(id).path), Self.sha256Hex([UInt8](bytes)) == id else { return false }
        verified.lock.withLock { _ = verified.ids.insert(id) }
        return true
    }

    /// The bytes and content type of `id`, nil when unknown.
    public func load(_ id: String) -> (bytes: Data, contentType: String)? {
        guard Self.isID(id), isIntact(id), let bytes = FileManager.default.contents(atPath: url(id).path) else { return nil }
        let type = FileManager.default.contents(atPath: url(id, suffix: ".type").path).map { String(decoding: $0, as: UTF8.self) }
        return (bytes, type ?? "application/octet-stream")
    }

    /// 64 lowercase hex digits: anything else is never a file name here.
    static func isID(_ id: String) -> Bool {
        id.utf8.count == 64 && id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    private func url(_ id: String, suffix: String = "") -> URL { directory.appendingPathComponent(id + suffix) }

    private func write(_ data: Data, to file: URL) throws {
        let temporary = directory.appendingPathComponent(".\(UUID().uuidString).tmp")
        do {
            try data.write(to: temporary)
            try Self.sync(temporary)
            if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: temporary); return }
            try FileManager.default.moveItem(at: temporary, to: file)
            try Self.sync(directory)  // the rename itself
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            // A concurrent upload of the same bytes won the rename: that file is just as good.
            if FileManager.default.fileExists(atPath: file.path) { return }
            throw HTTPError(500, .internalError, "cannot store the upload: \(error.localizedDescription)")
        }
    }

    /// fsync of a file or a directory.
    static func sync(_ url: URL) throws {
        let fd = open(url.path, O_RDONLY)
        guard fd >= 0 else { throw HTTPError(500, .internalError, "cannot open \(url.lastPathComponent) to sync it") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw HTTPError(500, .internalError, "cannot sync \(url.lastPathComponent)") }
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil)
        let hex = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in digest { out.append(hex[Int(byte >> 4)]); out.append(hex[Int(byte & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
