#if os(Linux) || os(macOS)  // child processes: not on iOS
import Foundation

#if canImport(Glibc)
import Glibc
private let systemRead = Glibc.read
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemRead = Darwin.read
private let systemWrite = Darwin.write
#endif

/// A program run to completion on a thread of its own (not on the test's task threads).
///
/// Spawned with `posix_spawn` and reaped with `waitpid`, not with Foundation's `Process`: on
/// Linux, `Process` learns that a child exited when a socket it hands the child closes, and a
/// child that leaves a daemon behind (the first `tmux new-session` starts the tmux server)
/// passes that socket on, so `waitUntilExit()` never returned and CI hung
/// (swift-corelibs-foundation issue 4795). The child gets only its three standard streams.
public enum Subprocess {
    public struct Run: CustomStringConvertible, Sendable {
        public var status: Int32
        public var output: String
        public var errors: String
        public var lines: [String] { output.split(separator: "\n").map(String.init) }
        public var description: String { "exit \(status)\n\(output)\(errors)" }

        public init(status: Int32, output: String, errors: String) {
            self.status = status
            self.output = output
            self.errors = errors
        }
    }

    public static func run(_ path: String, _ arguments: [String], input: String? = nil) async -> Run {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: runHere(path, arguments, input: input)) }
        }
    }

    /// Blocks the calling thread until the program has exited and both its outputs have ended.
    public static func runHere(_ path: String, _ arguments: [String], input: String?) -> Run {
        guard let stdin = Pipe2(), let out = Pipe2(), let err = Pipe2() else {
            return Run(status: -1, output: "", errors: "pipe: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        posix_spawn_file_actions_adddup2(&actions, out.write, 1)
        posix_spawn_file_actions_adddup2(&actions, err.write, 2)
        guard let closeFrom = closeFrom, closeFrom(&actions, 3) == 0 else {
            [stdin, out, err].forEach {
                close($0.read)
                close($0.write)
            }
            return Run(status: -1, output: "", errors: "posix_spawn_file_actions_addclosefrom_np is unavailable")
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(stdin.read)
        close(out.write)
        close(err.write)
        guard spawned == 0 else {
            [stdin.write, out.read, err.read].forEach { close($0) }
            return Run(status: -1, output: "", errors: "cannot start \(path): \(String(cString: strerror(spawned)))")
        }
        if let input { writeAll(stdin.write, Array(input.utf8)) }
        close(stdin.write)
        let (output, errors) = readBoth(out.read, err.read)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return Run(
            status: exitCode(status), output: String(decoding: output, as: UTF8.self),
            errors: String(decoding: errors, as: UTF8.self))
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` and `pipe2` (2.34+) are GNU
    /// extensions the Glibc module does not declare; they are looked up by name.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias PipeWithFlags = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private static let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }
    private static let pipeWithFlags = dlsym(nil, "pipe2").map { unsafeBitCast($0, to: PipeWithFlags.self) }

    /// Both ends of a close-on-exec pipe (only the ends dup'ed onto 0, 1, 2 reach the child).
    private struct Pipe2 {
        let read: Int32
        let write: Int32

        init?() {
            var fds: [Int32] = [0, 0]
            guard let pipeWithFlags, pipeWithFlags(&fds, O_CLOEXEC) == 0 else { return nil }
            (read, write) = (fds[0], fds[1])
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { systemWrite(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }  // the program stopped reading
            offset += written
        }
    }

    /// Reads two descriptors to their ends together, so neither output fills its pipe and stalls.
    private static func readBoth(_ first: Int32, _ second: Int32) -> ([UInt8], [UInt8]) {
        var collected: [[UInt8]] = [[], []]
        var polled = [
            pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0)
        ]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while polled.contains(where: { $0.fd >= 0 }) {
            guard poll(&polled, nfds_t(polled.count), -1) >= 0 else {
                if errno == EINTR { continue }
                break
            }
            for index in polled.indices where polled[index].fd >= 0 && polled[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { systemRead(polled[index].fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    collected[index] += buffer[..<count]
                } else if count == 0 || errno != EINTR {
                    close(polled[index].fd)
                    polled[index].fd = -1  // poll skips negative descriptors
                }
            }
        }
        return (collected[0], collected[1])
    }

    /// The exit status, or 128 + the signal for a program killed by one (as a shell reports it).
    private static func exitCode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
#endif
