import Dispatch
import Glibc

/// Blocks the calling thread until SIGTERM or SIGINT arrives. The handlers live here, not in
/// `main.swift`, so they are not bound to the main actor.
public func waitForTerminationSignal() -> Int32 {
    let received = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var which: Int32 = 0
    var sources: [any DispatchSourceSignal] = []
    for number in [SIGTERM, SIGINT] {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            which = number
            received.signal()
        }
        source.resume()
        sources.append(source)
    }
    received.wait()
    sources.forEach { $0.cancel() }
    return which
}
