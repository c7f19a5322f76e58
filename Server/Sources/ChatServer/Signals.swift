import Dispatch
import Foundation
import Glibc

/// SIGTERM / SIGINT, caught from the moment this is created: create it before announcing
/// readiness, or a signal sent right after the announcement is lost. The handlers live here,
/// not in `main.swift`, so they are not bound to the main actor. Use it from one thread.
public final class TerminationSignals {
    private let received = DispatchSemaphore(value: 0)
    private let arrived = SignalNumber()
    private var sources: [any DispatchSourceSignal] = []

    public init() {
        for number in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [received, arrived] in
                arrived.set(number)
                received.signal()
            }
            source.resume()
            // Only now drop the default action: the source is already listening.
            signal(number, SIG_IGN)
            sources.append(source)
        }
    }

    /// Blocks until a signal arrives and returns its number.
    public func wait() -> Int32 {
        received.wait()
        sources.forEach { $0.cancel() }
        return arrived.get()
    }
}

/// The number of the signal that arrived.
private final class SignalNumber: @unchecked Sendable {  // `value` is only touched under `lock`
    private let lock = NSLock()
    private var value: Int32 = 0

    func set(_ number: Int32) {
        lock.lock()
        value = number
        lock.unlock()
    }

    func get() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
