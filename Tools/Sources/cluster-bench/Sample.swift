import Foundation

/// Monotonic nanoseconds.
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Durations in milliseconds and their percentiles.
struct Sample: CustomStringConvertible {
    var values: [Double] = []

    func percentile(_ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }

    var description: String {
        String(
            format: "p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d)", percentile(0.5), percentile(0.99), percentile(1),
            values.count)
    }
}

/// Runs `count` jobs, `width` at a time.
func concurrently(_ count: Int, width: Int = 8, _ job: @escaping @Sendable (Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for lane in 0..<width {
            group.addTask { for index in stride(from: lane, to: count, by: width) { try await job(index) } }
        }
        try await group.waitForAll()
    }
}

/// Events from callbacks and threads, awaited with a deadline.
final class Events<Event: Sendable>: Sendable {
    private let stream: AsyncStream<Event?>
    private let sink: AsyncStream<Event?>.Continuation

    init() { (stream, sink) = AsyncStream<Event?>.makeStream() }

    func send(_ event: Event) { sink.yield(event) }

    /// Hands each event to `take` until it returns true; false when `seconds` pass first.
    func until(seconds: Double, _ take: (Event) -> Bool) async -> Bool {
        let deadline = Task { [sink] in
            do {
                try await Task.sleep(for: .seconds(seconds))
                sink.yield(nil)
            } catch {}  // cancelled: the events came in time
        }
        defer { deadline.cancel() }
        for await event in stream {
            guard let event else { return false }
            if take(event) { return true }
        }
        return false
    }
}
