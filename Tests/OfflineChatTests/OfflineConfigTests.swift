import Foundation
import Testing

@testable import OfflineChat

/// The three ways *Encrypt the Cache* configures offline support agree.
@Suite struct OfflineConfigTests {
    @Test func theInitializerTheBuilderAndThePropertiesAgree() {
        let initialized = OfflineConfig(enabled: true, encryption: true, encryptionFailureBehavior: .plaintextFallback)
        let built = OfflineConfig.Builder().setEnabled(true).setEncryption(true).setEncryptionFailureBehavior(
            .plaintextFallback
        ).build()
        var assigned = OfflineConfig()
        assigned.enabled = true
        assigned.encryption = true
        assigned.encryptionFailureBehavior = .plaintextFallback
        #expect(initialized == built && built == assigned)
    }

    @Test func theInitializersDefaultsAreTheDocumentedOnes() {
        let defaults = OfflineConfig(enabled: true)
        #expect(defaults.encryption == false && defaults.encryptionFailureBehavior == .onlineOnly)
        #expect(
            defaults.maxConversations == 100 && defaults.maxMessagesPerConversation == 500
                && defaults.maxPendingMessages == 50)
        #expect(OfflineConfig() == OfflineConfig(enabled: false), "off unless enabled")
    }

    @Test func limitsAreClamped() {
        var config = OfflineConfig(enabled: true)
        config.maxConversations = 0
        config.maxMessagesPerConversation = 1_000_000
        #expect(config.maxConversations == 1 && config.maxMessagesPerConversation == 100_000)
    }
}

/// Where caches live when the app does not say: a data folder that is neither purged nor
/// temporary (Application Support on Apple platforms, the XDG data home here).
@Suite struct DefaultStorageTests {
    @Test func theDefaultFolderIsTheDataHome() {
        let home = URL(fileURLWithPath: "/home/ann")
        #expect(
            ChatConfig.dataHomeStorage(environment: ["XDG_DATA_HOME": "/srv/data"], home: home).path
                == "/srv/data/OfflineChat")
        #expect(ChatConfig.dataHomeStorage(environment: [:], home: home).path == "/home/ann/.local/share/OfflineChat")
        #expect(
            ChatConfig.dataHomeStorage(environment: ["XDG_DATA_HOME": ""], home: home).path
                == "/home/ann/.local/share/OfflineChat")
        let config = ChatConfig(appID: "demo", server: URL(string: "https://chat.example.com")!)
        #expect(config.storageDirectory == ChatConfig.defaultStorageDirectory)
    }
}
