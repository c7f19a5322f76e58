import Foundation

/// Monotonic nanoseconds.
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Percentiles of a sample, in milliseconds.
struct Latencies {
    var samples: [UInt64] = []

    func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        let index = min(sorted.count - 1, Int(Double(sorted.count - 1) * p))
        return Double(sorted[index]) / 1e6
    }
}

/// Runs `body(worker)` on `workers` threads and returns the wall time in seconds.
func parallel(_ workers: Int, _ body: @escaping @Sendable (Int) throws -> Void) -> Double {
    let group = DispatchGroup()
    let start = now()
    for worker in 0..<workers {
        group.enter()
        Thread {
            do { try body(worker) } catch { FileHandle.standardError.write(Data("worker \(worker): \(error)\n".utf8)) }
            group.leave()
        }.start()
    }
    group.wait()
    return Double(now() - start) / 1e9
}

func format(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
