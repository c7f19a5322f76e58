import Foundation
import OfflineChat

/// A client's connection changes ("connected", "disconnected"), awaited in order by test
/// tools and benchmarks. Register it with `addConnectionListener` before logging in.
public final class ConnectionEvents: ConnectionListener, Sendable {
    private let stream: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    /// An empty recorder.
    public init() { (stream, continuation) = AsyncStream<String>.makeStream() }

    public func onConnected() { continuation.yield("connected") }
    public func onDisconnected() { continuation.yield("disconnected") }

    /// Returns once `event` happened (since the last wait; earlier ones are buffered).
    public func next(_ event: String) async {
        for await seen in stream where seen == event { return }
    }
}

/// This process's memory high-water mark.
public enum ProcessMemory {
    /// VmHWM from /proc/self/status, in KiB (0 where there is no /proc).
    public static func peakResidentKilobytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    /// Starts the high-water mark afresh (Linux: /proc/self/clear_refs), to measure one phase.
    public static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}
