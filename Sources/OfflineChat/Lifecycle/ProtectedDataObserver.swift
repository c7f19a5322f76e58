import Foundation
import OfflineChatLocking

/// Calls a client's `protectedDataBecameAvailable()` when the system says protected data is
/// available again (iOS, iPadOS, Mac Catalyst, visionOS: the first unlock after a restart), so
/// a session that began before it gets its cache without the app wiring anything.
final class ProtectedDataObserver: Sendable {
    /// `UIApplication.protectedDataDidBecomeAvailableNotification`, by name (the SDK does not
    /// link UIKit); nil where there is no data protection to wait for.
    static let platformNotification: Notification.Name? = {
        #if os(iOS) || os(tvOS) || os(visionOS) || targetEnvironment(macCatalyst)
        Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")
        #else
        nil
        #endif
    }()

    private struct Registration: @unchecked Sendable {  // an opaque token, only removed
        let center: NotificationCenter
        let token: any NSObjectProtocol
    }
    private let registration = Locked<Registration?>(nil)

    /// Observes `name` on `center` for `client` (held weakly).
    func start(_ center: NotificationCenter, _ name: Notification.Name, for client: ChatClient) {
        let token = center.addObserver(forName: name, object: nil, queue: nil) { [weak client] _ in
            guard let client else { return }
            Task { await client.protectedDataBecameAvailable() }
        }
        registration.withLock { $0 = Registration(center: center, token: token) }
    }

    deinit {
        if let registration = registration.withLock({ $0 }) {
            registration.center.removeObserver(registration.token)
        }
    }
}
