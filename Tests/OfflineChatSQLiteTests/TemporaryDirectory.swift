import Foundation

/// A fresh directory under the system temp dir, removed when the value is released.
final class TemporaryDirectory {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sqlitekit-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}
