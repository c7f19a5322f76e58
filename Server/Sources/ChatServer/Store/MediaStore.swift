import CCrypto
import Foundation

/// Uploaded media files, content-addressed: a file's id is the SHA-256 of its bytes, so an
/// upload repeated after a lost answer (or by a restarted client) stores nothing new and
/// answers the same id. Files live in `directory` beside a small `.type` sidecar holding the
/// content type they were first uploaded with; writes go to a temporary name and are renamed
/// into place, so a reader never sees half a file.
public struct MediaStore: Sendable {
    public let directory: URL

    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// Stores `bytes` (once) and returns their id.
    public func store(_ bytes: [UInt8], contentType: String) throws -> String {
        let id = Self.sha256Hex(bytes)
        let file = url(id)
        if !FileManager.default.fileExists(atPath: file.path) {
            try write(Data(contentType.utf8), to: url(id, suffix: ".type"))
            try write(Data(bytes), to: file)
        }
        return id
    }

    /// The bytes and content type of `id`, nil when unknown.
    public func load(_ id: String) -> (bytes: Data, contentType: String)? {
        guard Self.isID(id), let bytes = FileManager.default.contents(atPath: url(id).path) else { return nil }
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
            if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: temporary); return }
            try FileManager.default.moveItem(at: temporary, to: file)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            // A concurrent upload of the same bytes won the rename: that file is just as good.
            if FileManager.default.fileExists(atPath: file.path) { return }
            throw HTTPError(500, .internalError, "cannot store the upload: \(error.localizedDescription)")
        }
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
