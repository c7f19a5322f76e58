import Dispatch
import Foundation
import OfflineChatLocking
import Synchronization

// lock-bench: `Locked` (the lock of the SDK and chatd) against `Synchronization.Mutex`, each
// guarding a small dictionary that threads update between stretches of their own work (about
// 0.3 µs outside the lock for every update inside it), with 1 to 64 threads. Prints wall and
// CPU nanoseconds per update and their ratio; the interesting rows are those with more
// threads than cores (chatd runs 16 request threads).

let updates = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 400_000

@inline(never) func ownWork(_ seed: Int) -> Int {
    var value = seed
    for step in 0..<200 { value = value &* 31 &+ step }
    return value
}

func cpuNanoseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let seconds = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    return seconds * 1e9 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e3
}

/// Wall and CPU nanoseconds per update with `threads` threads calling `update`.
func measure(threads: Int, _ update: @escaping @Sendable (Int) -> Void) -> (wall: Double, cpu: Double) {
    let each = updates / threads
    let cpuBefore = cpuNanoseconds()
    let start = DispatchTime.now().uptimeNanoseconds
    let group = DispatchGroup()
    for _ in 0..<threads {
        group.enter()
        Thread {
            var seed = 0
            for index in 0..<each {
                seed &+= ownWork(index)
                update(seed)
            }
            group.leave()
        }.start()
    }
    group.wait()
    let total = Double(each * threads)
    return (Double(DispatchTime.now().uptimeNanoseconds - start) / total, (cpuNanoseconds() - cpuBefore) / total)
}

final class MutexCounts: Sendable {
    let counts = Mutex<[Int: Int]>([:])
    func update(_ key: Int) { counts.withLock { $0[key & 1023, default: 0] += 1 } }
}

print("lock-bench: \(updates) locked updates per row, \(ProcessInfo.processInfo.activeProcessorCount) cores")
print("threads  Locked wall/cpu ns   Mutex wall/cpu ns   Mutex/Locked (wall)")
for threads in [1, 2, 4, 8, 16, 64] {
    let locked = Locked<[Int: Int]>([:])
    let mutex = MutexCounts()
    let a = measure(threads: threads) { key in locked.withLock { $0[key & 1023, default: 0] += 1 } }
    let b = measure(threads: threads) { mutex.update($0) }
    print(
        String(
            format: "%7d  %8.0f / %-8.0f   %8.0f / %-8.0f   %.1f ×", threads, a.wall, a.cpu, b.wall, b.cpu,
            b.wall / a.wall))
}
