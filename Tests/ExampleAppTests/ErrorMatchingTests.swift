import ChatTesting
import Foundation
import OfflineChat
import Testing

/// An app matches the SDK's errors by their typed codes, the device's and chatd's alike.
@Suite(.timeLimit(.minutes(1))) struct ErrorMatchingTests {
    @Test func anAppMatchesErrorsByTypedCode() async throws {
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        let chat = try ChatClient(config: appTestConfig(fake))
        do {
            _ = try await chat.editMessage(1, text: "x")
            Issue.record("edited without a session")
        } catch let error as ChatException where error.code == .userNotLoggedIn {
            // the device's code
        }
        fake.isReachable = false
        do {
            _ = try await chat.login(uid: "alice", authToken: token)
            Issue.record("logged in without a network or a cache")
        } catch let error as ChatException where error.code == .internetUnavailable {
            // no network, and offline support off: nothing to answer from. Shown as any error:
            let shown: any Error = error
            #expect(shown.localizedDescription == error.errorDescription)
            #expect(error.recoverySuggestion?.contains("queued") == true)
            let bridged = shown as NSError
            #expect(bridged.domain == ChatException.errorDomain)
            #expect(bridged.userInfo["errorCode"] as? String == ChatException.internetUnavailable)
            #expect(bridged.localizedRecoverySuggestion == error.recoverySuggestion)
            // Where an optional is expected, the text is still the exception's own.
            let maybe: ChatException? = error
            let text: String? = maybe?.errorDescription
            let own: String = error.errorDescription
            #expect(text == own && !own.isEmpty)
        }
        fake.isReachable = true
        do {
            _ = try await chat.login(uid: "alice", authToken: "not-a-token")
            Issue.record("logged in with a bad token")
        } catch let error as ChatException where error.code == .unauthorized {
            // chatd's code
        }
    }
}
