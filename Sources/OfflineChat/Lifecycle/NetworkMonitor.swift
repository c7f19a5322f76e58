#if canImport(Network)
import Dispatch
import Network
import OfflineChatLocking

/// Calls ``ChatClient/networkChanged()`` when the network comes back, and replaces a connected
/// socket when the device moves to other interfaces, from the system's `NWPathMonitor` (Apple
/// platforms). Optional: an app
/// with a path monitor of its own calls `networkChanged()` from it instead. Keep the monitor
/// as long as the client; it stops when released or cancelled.
///
/// ```swift
/// let monitor = NetworkMonitor(client: chat)
/// ```
public final class NetworkMonitor: @unchecked Sendable {  // `monitor` is only started and cancelled
    private let monitor = NWPathMonitor()

    /// Starts monitoring on `queue`.
    public init(
        client: ChatClient, queue: DispatchQueue = DispatchQueue(label: "dev.offlinechat.NetworkMonitor")
    ) {
        let changes = Locked(NetworkPathChanges())
        monitor.pathUpdateHandler = { [weak client] path in
            let reduced = NetworkPath(
                satisfied: path.status == .satisfied, interfaces: path.availableInterfaces.map(\.name))
            switch changes.withLock({ $0.update(reduced) }) {
            case .back: client?.networkChanged()
            case .moved: client?.networkMoved()
            case .none: break
            }
        }
        monitor.start(queue: queue)
    }

    deinit { monitor.cancel() }

    /// Stops monitoring.
    public func cancel() { monitor.cancel() }
}
#endif
