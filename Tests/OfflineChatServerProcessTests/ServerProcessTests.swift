#if os(Linux) || os(macOS)
import Foundation
import OfflineChatServerProcess
import Testing

/// Waiting for a child asks the kernel (not Foundation's run loop) and reports what
/// `terminationStatus` would; a child that ignores the polite signal is killed once the
/// patience runs out.
@Suite struct ServerProcessTests {
    func shell(_ script: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        try process.run()
        return process
    }

    /// A shell that ignores SIGTERM, returned once its trap is set.
    func stubbornShell() throws -> Process {
        let ready = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "trap '' TERM; echo ready; while :; do sleep 1; done"]
        process.standardOutput = ready
        try process.run()
        var printed = ""
        while !printed.contains("ready") {
            let chunk = ready.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "the shell ended before its trap was set")
            printed += String(decoding: chunk, as: UTF8.self)
        }
        return process
    }

    @Test func theExitStatusOrTheSignalThatEndedIt() throws {
        #expect(ServerProcess.waitForExit(try shell("exit 3")) == 3)
        #expect(ServerProcess.waitForExit(try shell("kill -KILL $$")) == SIGKILL)
        let reaped = try shell("exit 4")
        reaped.waitUntilExit()  // Foundation reaped it first: its status all the same
        #expect(ServerProcess.waitForExit(reaped) == 4)
    }

    @Test func aChildThatOutlivesItsSignalIsKilled() throws {
        let stubborn = try stubbornShell()
        #expect(ServerProcess.end(stubborn, patience: 0) == SIGKILL)
        let polite = try shell("sleep 60")
        #expect(ServerProcess.end(polite) == SIGTERM)
    }
}
#endif
