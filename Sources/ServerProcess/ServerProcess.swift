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
    @discardableResult
    public static func end(_ process: Process, with signal: Int32 = SIGTERM) -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    /// Creates a throwaway database on the PostgreSQL server `postgres` (a URL without a
    /// database, as `CHATD_TEST_POSTGRES` holds it) with `psql`, and returns its URL: each test
    /// server (or cluster) gets an empty database of its own.
    public static func createDatabase(on postgres: String, psql: String = "/usr/bin/psql") throws -> String {
        let name = "chatd_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: psql)
        process.arguments = ["-q", "-d", postgres + "/postgres", "-c", "CREATE DATABASE \(name)"]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure("psql could not create database \(name)") }
        return postgres + "/" + name
    }
}
#endif
