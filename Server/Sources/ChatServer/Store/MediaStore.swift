import CCrypto
import Foundation
import OfflineChatLocking
import OfflineChatProtocol

/// The bytes of uploaded media, content-addressed: a file's name is the SHA-256 of its
/// bytes, so uploads of the same bytes (a retry after a lost answer, a forwarded photo) share
/// one file; who may fetch it and with which content type is the store's (`Store+Uploads`).
/// Writes go to a temporary name, are synced to disk and renamed into place (the directory
/// synced too), so a reader never sees half a file and a crash leaves the old state or the
/// new. A file is checked against its name before it is first served: a torn one (from a
/// crash of an older chatd, or a damaged disk) is never served, and the next upload of the
/// right bytes writes it again.
public struct MediaStore: Sendable {
    public let directory: URL
    /// Ids whose file was checked against its hash since start (files never change after).
    private let verified = Locked(Set<String>())

    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
    }

    /// Stores `bytes`, whose SHA-256 is `id` (`sha256Hex`), unless that file is already whole.
    public func store(_ bytes: [UInt8], as id: String) throws {
        guard !isIntact(id) else { return }
        try? FileManager.default.removeItem(at: url(id))  // torn: the right bytes are here now
        try write(Data(bytes), to: url(id))
    }

    /// Removes file `id` (no upload uses it any more).
    public func remove(_ id: String) {
        guard Endpoints.isMediaID(id) else { return }
        verified.withLock { _ = $0.remove(id) }
        try? FileManager.default.removeItem(at: url(id))
        try? FileManager.default.removeItem(at: url(id, suffix: ".type"))  // written by chatd before uploads had rows
    }

    /// Whether `id`'s file is there and holds the bytes its name is the hash of.
    private func isIntact(_ id: String) -> Bool {
        // Still there: a fetch racing a removal may have marked it checked just after.
        if verified.withLock({ $0.contains(id) }) && FileManager.default.fileExists(atPath: url(id).path) {
            return true
        }
        guard Self.sha256Hex(ofFile: url(id)) == id else { return false }
        verified.withLock { _ = $0.insert(id) }
        return true
    }

    /// File `id` opened for reading, and its size; nil when missing or torn. The caller closes it.
    func openForReading(_ id: String) -> (fd: Int32, size: Int)? {
        guard Endpoints.isMediaID(id), isIntact(id) else { return nil }
        let fd = Glibc.open(url(id).path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            close(fd)
            return nil
        }
        return (fd, Int(status.st_size))
    }

    /// The SHA-256 of a file's bytes in hex, read 64 KiB at a time (a file is never whole in
    /// memory here); nil when it cannot be read.
    static func sha256Hex(ofFile url: URL) -> String? {
        guard let handle = try? FileHandle(forReadingFrom: url), let context = EVP_MD_CTX_new() else { return nil }
        defer {
            EVP_MD_CTX_free(context)
            try? handle.close()
        }
        guard EVP_DigestInit_ex(context, sha256, nil) == 1 else { return nil }
        while let chunk = try? handle.read(upToCount: 64 << 10), !chunk.isEmpty {
            _ = chunk.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1 else { return nil }
        return hex(digest)
    }

    private func url(_ id: String, suffix: String = "") -> URL { directory.appendingPathComponent(id + suffix) }

    private func write(_ data: Data, to file: URL) throws {
        let temporary = directory.appendingPathComponent(".\(UUID().uuidString).tmp")
        do {
            try data.write(to: temporary)
            try Self.sync(temporary)
            if FileManager.default.fileExists(atPath: file.path) {
                try FileManager.default.removeItem(at: temporary)
                return
            }
            try FileManager.default.moveItem(at: temporary, to: file)
            try Self.sync(directory)  // the rename itself
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            // A concurrent upload of the same bytes won the rename: that file is just as good.
            if FileManager.default.fileExists(atPath: file.path) { return }
            throw StoreError.broken("cannot store the upload: \(error.localizedDescription)")
        }
    }

    /// fsync of a file or a directory.
    static func sync(_ url: URL) throws {
        let fd = open(url.path, O_RDONLY)
        guard fd >= 0 else { throw StoreError.broken("cannot open \(url.lastPathComponent) to sync it") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StoreError.broken("cannot sync \(url.lastPathComponent)") }
    }

    /// SHA-256 fetched from OpenSSL's provider once: `EVP_sha256()` is fetched again by every
    /// digest, behind a lock all request threads share (every request hashes its token).
    private nonisolated(unsafe) static let sha256 = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = EVP_Digest(bytes, bytes.count, &digest, &length, sha256, nil)
        return hex(digest)
    }

    /// Bytes in lowercase hex.
    static func hex(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(digest.count * 2)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
