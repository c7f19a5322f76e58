import Foundation

/// What `chat` was asked to do: the global options and one command.
struct Invocation {
    enum Command: Equatable {
        case login, logout, conversations, pending, retry, sync, status, clearCache
        case history(with: String, limit: Int, group: Bool)
        case send(to: String, text: String, group: Bool)
        case listen(count: Int?)
        case open(with: String, group: Bool)
        case help
    }

    var server = URL(string: "http://127.0.0.1:8080")!
    var app = "chat"
    var uid: String?
    var data = URL(fileURLWithPath: NSString(string: "~/.offlinechat").expandingTildeInPath)
    var encrypt = false
    var token: String?
    var json = false
    var command = Command.help

    static let usage = """
        usage: chat [--server URL] [--app ID] --as UID [--data DIR] [--encrypt] [--token T] [--json] COMMAND
          login                      check the token (--token) with the server and keep it in the data dir
          logout                     forget the token and wipe this user's cache
          conversations              the conversation list: cached first, then the server's
          history WITH [--limit N] [--group]
                                     a conversation's latest messages, both phases with their latency
          send TO TEXT [--group]     send (queued when offline, sent when the connection returns)
          pending                    messages waiting in the outbox
          retry                      send queued and failed messages now
          sync                       a catch-up sync with its progress and outcome
          status                     connection, sync, cache, outbox and encryption
          listen [--count N]         print live events (until ^C, or N events)
          clear-cache                empty this user's offline cache (queued messages are discarded)
          open WITH [--group]        an interactive conversation view
        The server defaults to $CHAT_SERVER or http://127.0.0.1:8080; the data dir to ~/.offlinechat.
        """

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    static func parse(_ arguments: [String], environment: [String: String]) throws -> Invocation {
        var invocation = Invocation()
        if let server = environment["CHAT_SERVER"], let url = URL(string: server) { invocation.server = url }
        var positional: [String] = []
        var limit = 20
        var group = false
        var count: Int?
        var index = 0
        func value(_ flag: String) throws -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(description: "\(flag) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--help", "-h": return Invocation()
            case "--server":
                let raw = try value(argument)
                guard let url = URL(string: raw), ["http", "https"].contains(url.scheme ?? "") else {
                    throw UsageError(description: "--server must be an http:// or https:// URL, not \(raw)")
                }
                invocation.server = url
            case "--app": invocation.app = try value(argument)
            case "--as": invocation.uid = try value(argument)
            case "--data": invocation.data = URL(fileURLWithPath: try value(argument))
            case "--encrypt": invocation.encrypt = true
            case "--token": invocation.token = try value(argument)
            case "--json": invocation.json = true
            case "--group": group = true
            case "--limit", "--count":
                let raw = try value(argument)
                guard let number = Int(raw), (1...100).contains(number) || (argument == "--count" && number > 0) else {
                    throw UsageError(
                        description:
                            "\(argument) must be a positive number\(argument == "--limit" ? " up to 100" : ""), not \(raw)"
                    )
                }
                if argument == "--limit" { limit = number } else { count = number }
            default:
                guard !argument.hasPrefix("--") else { throw UsageError(description: "unknown option \(argument)") }
                positional.append(argument)
            }
            index += 1
        }
        invocation.command = try command(positional, limit: limit, group: group, count: count)
        if invocation.command != .help && invocation.uid == nil {
            throw UsageError(description: "say who you are: --as UID")
        }
        return invocation
    }

    private static func command(_ words: [String], limit: Int, group: Bool, count: Int?) throws -> Command {
        func exactly(_ n: Int, _ form: String) throws {
            guard words.count == n else { throw UsageError(description: "usage: chat \(form)") }
        }
        switch words.first {
        case nil: return .help
        case "login":
            try exactly(1, "login")
            return .login
        case "logout":
            try exactly(1, "logout")
            return .logout
        case "conversations":
            try exactly(1, "conversations")
            return .conversations
        case "pending":
            try exactly(1, "pending")
            return .pending
        case "retry":
            try exactly(1, "retry")
            return .retry
        case "sync":
            try exactly(1, "sync")
            return .sync
        case "status":
            try exactly(1, "status")
            return .status
        case "clear-cache":
            try exactly(1, "clear-cache")
            return .clearCache
        case "listen":
            try exactly(1, "listen [--count N]")
            return .listen(count: count)
        case "history":
            try exactly(2, "history WITH [--limit N] [--group]")
            return .history(with: words[1], limit: limit, group: group)
        case "open":
            try exactly(2, "open WITH [--group]")
            return .open(with: words[1], group: group)
        case "send":
            guard words.count >= 3 else { throw UsageError(description: "usage: chat send TO TEXT [--group]") }
            return .send(to: words[1], text: words[2...].joined(separator: " "), group: group)
        case let other?: throw UsageError(description: "unknown command \(other) (chat --help lists them)")
        }
    }
}
