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

/// Where `needle` first occurs in `bytes`: `memchr` for its first byte,
/// `memcmp` for the rest. The bench shares the machine's two cores with chatd, so its own
/// looks at answers and frames must cost little: Foundation's `range(of:)` and
/// `firstRange(of:)` took a third of its CPU during the sends.
func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
    guard let base = bytes.baseAddress, let first = needle.first else { return nil }
    return needle.withUnsafeBytes { pattern -> Int? in
        var index = 0
        while index + needle.count <= bytes.count {
            guard let hit = memchr(base + index, Int32(first), bytes.count - needle.count + 1 - index) else {
                return nil
            }
            let offset = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + offset, pattern.baseAddress!, needle.count) == 0 { return offset }
            index = offset + 1
        }
        return nil
    }
}

/// A sender and a different receiver among `clients` users, at random.
func randomPair(among clients: Int, using random: inout SystemRandomNumberGenerator) -> (from: Int, to: Int) {
    let from = Int.random(in: 0..<clients, using: &random)
    let to = Int.random(in: 0..<clients - 1, using: &random)
    return (from, to >= from ? to + 1 : to)
}

/// The admin key the benchmarks start chatd with (chatd wants 32 bytes or more).
let benchAdminKey = "chatd-bench-admin-key-of-32-bytes-or-more"
