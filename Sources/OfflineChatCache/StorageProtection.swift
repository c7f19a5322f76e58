import Foundation

/// What Apple platforms add to a cache's folder, once it exists: the folder is excluded from
/// backups (the server has everything but the unsent queue, and a restored cache would be
/// stale), and on iOS, watchOS, tvOS and visionOS its files take the protection class
/// `completeUntilFirstUnlock`, which the database, its WAL and the media files created inside
/// inherit: readable by background work while the device is locked, once it was unlocked after
/// a restart (`complete` would close the cache under a background merge). Elsewhere: nothing.
/// Best effort: a failure leaves the folder as the system made it.
enum StorageProtection {
    static func apply(to directory: URL) {
        #if canImport(Darwin)
        var folder = directory
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        try? folder.setResourceValues(values)
        #if os(iOS) || os(watchOS) || os(tvOS) || os(visionOS)
        let protection: [FileAttributeKey: Any] = [.protectionKey: FileProtectionType.completeUntilFirstUnlock]
        try? FileManager.default.setAttributes(protection, ofItemAtPath: directory.path)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
            try? FileManager.default.setAttributes(
                protection, ofItemAtPath: directory.appendingPathComponent(name).path)
        }
        #endif
        #endif
    }
}
