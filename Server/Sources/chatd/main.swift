import ChatServer
import Foundation
import OfflineChatProtocol

/// Unbuffered, so scripts and tests see each line at once. A reader that went away (the
/// parent died: its pipe is closed) loses the line; chatd still shuts down cleanly.
func say(_ line: String) {
    try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    try? FileHandle.standardError.write(contentsOf: Data("chatd: \(message)\n".utf8))
    exit(2)
}

// Everything chatd creates (database, media, admin commands' files) is its own account's only.
umask(0o077)

let command: ChatdCommand
let configuration: ServerConfiguration
do {
    (command, configuration) = try ChatdArguments.parse(
        Array(CommandLine.arguments.dropFirst()),
        environment: ProcessInfo.processInfo.environment)
} catch {
    fail("\(error)\n\(ChatdArguments.usage)")
}

switch command {
case .help:
    say(ChatdArguments.usage)
case .version:
    say("chatd \(Endpoints.version)")
case .addUser, .token, .addGroup, .addGroupMember, .importGroupMembers, .migrate, .export, .importFile, .newEpoch:
    do {
        let text = try ChatdArguments.runAdmin(command, configuration: configuration)
        if !text.isEmpty { say(text) }
    } catch {
        fail("\(error)")
    }
case .serve:
    MemoryAllocator.keepFreedMemory()
    let signals = TerminationSignals()
    if configuration.stopOnStdinEOF { signals.terminateOnStdinEOF() }
    let server: ChatServer
    let port: UInt16
    do {
        server = try ChatServer(configuration: configuration)
        port = try server.start()
    } catch {
        fail("cannot start: \(error)")
    }
    for warning in ChatdArguments.warnings(Array(CommandLine.arguments.dropFirst()), configuration) {
        try? FileHandle.standardError.write(contentsOf: Data("chatd: warning: \(warning)\n".utf8))
    }
    if server.adminKeyGenerated {
        say("admin key (shown once, kept in \(configuration.dataDirectory.path)/admin.key): \(server.adminKey)")
    }
    say("chatd \(Endpoints.version) listening on \(server.baseURL(port: port))")
    say(
        server.hasConsole
            ? "console: \(server.consoleURL(port: port)) (sign in with the admin key)"
            : "console: not installed (deploy chatd_ChatServer.resources beside chatd, or pass --console-dir DIR)")
    let signal = signals.wait()
    say("chatd: signal \(signal), shutting down")
    do { try server.stop() } catch { fail("stopped, but the database did not close cleanly: \(error)") }
    say("chatd: stopped")
}
