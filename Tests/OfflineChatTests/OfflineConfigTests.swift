import OfflineChat
import Testing

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
