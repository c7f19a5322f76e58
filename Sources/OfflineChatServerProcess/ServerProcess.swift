#if os(Linux) || os(macOS)  // child processes: not on iOS
import Foundation

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Servers as child processes, for tests and benchmarks: started, then waited on until they
/// print that they are ready (chatd's `listening on`, nats-server's `Server is ready`).
public enum ServerProcess {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// Starts `binary`, its standard output (and error, with `errorsToo`) on the returned pipe,
    /// and returns once `ready` was printed, with what was printed so far. Throws with that
    /// text when the process ends first.
    public static func start(
        _ binary: URL, _ arguments: [String], environment: [String: String]? = nil, standardInput: Pipe? = nil,
        errorsToo: Bool = false, readyWhen ready: String
    ) throws -> (process: Process, output: Pipe, printed: String) {
        let process = Process()
        let output = Pipe()
        process.executableURL = binary
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let standardInput { process.standardInput = standardInput }
        process.standardOutput = output
        if errorsToo { process.standardError = output }
        try process.run()
        var printed = ""
        while !printed.contains(ready) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                throw Failure("\(binary.lastPathComponent) exited before it printed \"\(ready)\": \(printed)")
            }
            printed += String(decoding: chunk, as: UTF8.self)
        }
        return (process, output, printed)
    }

    /// A self-signed certificate for 127.0.0.1 and its key, made by `openssl` in `directory`.
    public static func selfSignedCertificate(in directory: URL) throws -> (certificate: URL, key: URL) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (certificate, key) = (
            directory.appendingPathComponent("cert.pem"), directory.appendingPathComponent("key.pem")
        )
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key.path, "-out", certificate.path
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        guard waitForExit(openssl) == 0 else { throw Failure("openssl made no certificate") }
        return (certificate, key)
    }

    /// Starts chatd and returns it with its port once it listens. Its standard input is
    /// `lifeline`: started with `--stop-on-stdin-eof`, chatd stops when the pipe closes, which
    /// it does when the process holding it dies.
    public static func startChatd(
        _ binary: URL, _ arguments: [String], environment: [String: String]? = nil, lifeline: Pipe? = nil
    ) throws -> (process: Process, output: Pipe, port: Int) {
        let (process, output, printed) = try start(
            binary, arguments, environment: environment, standardInput: lifeline, readyWhen: "listening on")
        guard let range = printed.range(of: #"127\.0\.0\.1:(\d+)"#, options: .regularExpression),
            let port = Int(printed[range].split(separator: ":").last ?? "")
        else {
            process.terminate()
            throw Failure("no port in chatd's output: \(printed)")
        }
        return (process, output, port)
    }

    /// Sends `signal` to `process` if it still runs (SIGTERM: chatd drains and exits; SIGKILL:
    /// it dies mid-whatever, as on a crashed machine), waits for it, and returns its exit status.
    /// A process that outlives `signal` by `patience` seconds is killed (SIGKILL), with a line
    /// on standard error saying so: a server that hangs in its shutdown shows in the log
    /// instead of holding the whole run until CI's limit.
    @discardableResult
    public static func end(_ process: Process, with signal: Int32 = SIGTERM, patience: Int = 30) -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        let waiting = Waiting()
        let held = Held(process: process)
        Thread.detachNewThread {
            waiting.status = waitForExit(held.process)
            waiting.exited.signal()
        }
        if waiting.exited.wait(timeout: .now() + .seconds(patience)) == .timedOut {
            let name = process.executableURL?.lastPathComponent ?? "process"
            FileHandle.standardError.write(
                Data(
                    "\(name) \(process.processIdentifier) still ran \(patience) s after signal \(signal): killed\n".utf8
                ))
            kill(process.processIdentifier, SIGKILL)
            waiting.exited.wait()
        }
        return waiting.status
    }

    /// A process handed to the waiting thread, which only waits for it (`Process` is not
    /// `Sendable` on Apple platforms).
    private struct Held: @unchecked Sendable {
        let process: Process
    }

    /// The exit status a waiting thread hands over (written before `exited` is signalled, read
    /// after the wait for it).
    private final class Waiting: @unchecked Sendable {
        let exited = DispatchSemaphore(value: 0)
        var status: Int32 = 0
    }

    /// Blocks until `process` has exited and returns its exit status (or the signal that ended
    /// it), as `terminationStatus` does; asked again, it answers again. Not `waitUntilExit()`,
    /// which waits for Foundation to notice the exit: once, with tests starting servers in
    /// parallel, it waited for good for a chatd Foundation never saw exit (the whole SDK run
    /// hung past every time limit; the cause inside Foundation was not pinned down). The kernel
    /// is asked instead: `waitid` with `WNOWAIT` leaves the child for Foundation to reap. Read
    /// the status from here, not `terminationStatus`, which traps until Foundation has reaped.
    @discardableResult
    public static func waitForExit(_ process: Process) -> Int32 {
        var info = siginfo_t()
        while waitid(P_PID, id_t(process.processIdentifier), &info, WEXITED | WNOWAIT) != 0 {
            guard errno == EINTR else {
                // ECHILD: Foundation reaped it already, so it knows the status (or will at once).
                process.waitUntilExit()
                return process.terminationStatus
            }
        }
        return exitStatus(info)
    }

    /// The exit code, or the signal, of a child `waitid` reported.
    private static func exitStatus(_ info: siginfo_t) -> Int32 {
        #if canImport(Glibc)
        info._sifields._sigchld.si_status
        #else
        info.si_status
        #endif
    }

    /// Creates a throwaway database on the PostgreSQL server `postgres` (a URL without a
    /// database, as `CHATD_TEST_POSTGRES` holds it) with `psql` (found on `PATH` unless given),
    /// and returns its URL: each test server (or cluster) gets an empty database of its own.
    /// psql's complaints go to this process's standard error.
    public static func createDatabase(on postgres: String, psql: String? = nil) throws -> String {
        let name = "chatd_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: psql ?? "/usr/bin/env")
        process.arguments =
            (psql == nil ? ["psql"] : []) + ["-q", "-d", postgres + "/postgres", "-c", "CREATE DATABASE \(name)"]
        try process.run()
        guard waitForExit(process) == 0 else {
            throw Failure("psql could not create database \(name) (what it said is on standard error)")
        }
        return postgres + "/" + name
    }
}
#endif
