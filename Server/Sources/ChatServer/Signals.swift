import Foundation
import Glibc

/// SIGTERM / SIGINT, caught from the moment this is created: create it first thing, before
/// any thread starts, so every thread inherits the blocked mask and a signal stays pending
/// until `wait()` takes it (a signal sent right after readiness is announced is not lost).
///
/// Blocking plus `sigwait` rather than a dispatch signal source with `SIG_IGN`: on Linux the
/// source could be registered on a thread that blocks the signal while the main thread did
/// not, and the kernel then discarded the ignored signal, so chatd sometimes never stopped.
public final class TerminationSignals {
    private var set = sigset_t()

    public init() {
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Sends SIGTERM to this process once standard input reaches end of file (the parent that
    /// holds its other end died or let go).
    public func terminateOnStdinEOF() {
        let thread = Thread {
            var byte: UInt8 = 0
            while read(0, &byte, 1) > 0 {}
            kill(getpid(), SIGTERM)
        }
        thread.start()
    }

    /// Blocks until a signal arrives and returns its number.
    public func wait() -> Int32 {
        var number: Int32 = 0
        while sigwait(&set, &number) != 0 {}
        return number
    }
}
