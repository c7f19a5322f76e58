import ChatTesting
import Foundation
import OfflineChat

/// The configuration an app's tests start from: `fake` as the server (its transports set), a
/// fresh storage folder, time on `clock`, keys in memory; offline support on when asked.
func appTestConfig(
    _ fake: FakeChatd, offline enabled: Bool = false, callbackQueue: DispatchQueue = DispatchQueue(label: "app"),
    clock: ManualClock = ManualClock()
) -> ChatConfig {
    var offline = OfflineConfig()
    offline.enabled = enabled
    var config = ChatConfig(
        appID: "example", server: fake.url,
        storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("example-\(UUID())"),
        offline: offline, callbackQueue: callbackQueue, clock: clock)
    config.keyStore = InMemoryKeyStore()
    fake.configure(&config)
    return config
}
