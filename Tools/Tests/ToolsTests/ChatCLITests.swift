import ChatTesting
import Foundation
import OfflineChat
import OfflineChatServerProcess
import Testing

/// The `chat` command-line client, driven as a subprocess against a live chatd.
@Suite(.timeLimit(.minutes(2))) struct ChatCLITests {
    typealias Run = Subprocess.Run

    struct Device {
        let server: LiveChatd
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("chat-cli-\(UUID().uuidString)")
        var tokens: [String: String] = [:]

        static var binary: URL {
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chat")
        }

        /// `chat --server … --data … ARGUMENTS`, to completion. Each user has a data folder of
        /// their own: a login wipes other users' caches on the same device.
        func chat(_ arguments: [String], input: String? = nil) async -> Run {
            let uid = arguments.firstIndex(of: "--as").map { arguments[$0 + 1] } ?? "nobody"
            let all =
                ["--server", server.url.absoluteString, "--data", data.appendingPathComponent(uid).path] + arguments
            return await Subprocess.run(Self.binary.path, all, input: input)
        }

        func login(_ uid: String) async -> Run { await chat(["--as", uid, "login", "--token", tokens[uid]!]) }
    }

    func device() async throws -> Device {
        var device = Device(server: try LiveChatd())
        for uid in ["alice", "bob"] { device.tokens[uid] = try await device.server.user(uid, name: uid.capitalized) }
        return device
    }

    @Test func loginSendHistoryAndConversationsInBothFormats() async throws {
        let device = try await device()
        #expect(await device.login("alice").output == "logged in as alice (Alice)\n")
        #expect(await device.login("bob").status == 0)
        let sent = await device.chat(["--as", "alice", "send", "bob", "hello", "bob"])
        #expect(sent.status == 0 && sent.output.hasPrefix("sent (id "), "\(sent)")
        let history = await device.chat(["--as", "bob", "history", "alice"])
        #expect(
            history.lines.first?.hasPrefix("— cached (") == true
                && history.lines.contains { $0.hasPrefix("— server (") }, "\(history)")
        #expect(history.lines.last?.hasSuffix("alice: hello bob") == true, "\(history)")
        // The second read answers from the cache first.
        let again = await device.chat(["--as", "bob", "--json", "history", "alice"])
        let events = try again.lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(events.map { $0["event"] as? String } == ["phase", "item", "phase", "item"], "\(again)")
        #expect(
            events[0]["phase"] as? String == "cached" && events[0]["ms"] is Int
                && events[1]["text"] as? String == "hello bob")
        let conversations = await device.chat(["--as", "bob", "conversations"])
        #expect(
            conversations.lines.contains { $0.contains("Alice [1 unread]") && $0.contains("hello bob") },
            "\(conversations)")
    }

    @Test func badArgumentsAndRejectedTokensGetAClearMessageAndAStatus() async throws {
        let device = try await device()
        let noUser = await device.chat(["history", "alice"])
        #expect(noUser.status == 2 && noUser.errors.contains("--as UID"))
        #expect(await device.chat(["--as", "bob", "dance"]).status == 2)
        #expect(
            await device.chat(["--as", "bob", "history", "alice", "--limit", "0"]).errors.contains("--limit must be"))
        #expect(await device.chat(["--as", "bob", "send", "alice"]).status == 2)
        let noToken = await device.chat(["--as", "bob", "pending"])
        #expect(noToken.status == 1 && noToken.errors.contains("no token for bob"), "\(noToken)")
        let rejected = await device.chat(["--as", "bob", "login", "--token", "not-a-token"])
        #expect(rejected.status == 1 && rejected.errors.contains("rejected the token"), "\(rejected)")
        let json = await device.chat(["--as", "bob", "--json", "pending"])
        #expect(json.status == 1 && json.output.contains("\"event\":\"error\""), "\(json)")
        #expect(await device.chat(["--help"]).output.contains("usage: chat"))
        device.server.stop()
        let unreachable = await device.chat(["--as", "alice", "login", "--token", device.tokens["alice"]!])
        #expect(unreachable.status == 1 && unreachable.errors.contains("cannot reach"), "never a crash: \(unreachable)")
    }

    @Test func offlineReadsComeFromTheCacheAndSendsQueueUntilARetry() async throws {
        let device = try await device()
        _ = await device.login("alice")
        _ = await device.login("bob")
        _ = await device.chat(["--as", "alice", "send", "bob", "before"])
        _ = await device.chat(["--as", "bob", "history", "alice"])
        device.server.stop()
        let history = await device.chat(["--as", "bob", "history", "alice"])
        #expect(
            history.status == 0
                && history.lines.contains(
                    "— server: unreachable (offline); the cached phase above is what this device knows")
        )
        #expect(history.lines.contains { $0.hasSuffix("alice: before") }, "served from the cache: \(history)")
        // Scripts tell offline from a server error by the SDK's code.
        let json = await device.chat(["--as", "bob", "--json", "history", "alice"])
        let last = try #require(
            try JSONSerialization.jsonObject(with: Data((json.lines.last ?? "").utf8)) as? [String: Any])
        #expect(json.status == 0 && last["phase"] as? String == "server" && last["offline"] as? Bool == true, "\(json)")
        #expect(last["code"] as? String == ChatException.internetUnavailable, "\(json)")
        let send = await device.chat(["--as", "bob", "send", "alice", "from", "the", "tunnel"])
        #expect(send.status == 0 && send.output.hasPrefix("queued (offline)"), "\(send)")
        let pending = await device.chat(["--as", "bob", "pending"])
        #expect(
            pending.lines.first == "1 message(s) waiting to be sent"
                && pending.output.contains("from the tunnel [pending]"), "\(pending)")
        #expect(await device.chat(["--as", "bob", "retry"]).status == 1, "retry needs the server")
        try device.server.restart()
        let retry = await device.chat(["--as", "bob", "retry"])
        #expect(retry.status == 0 && retry.output == "everything queued is sent\n", "\(retry)")
        let aliceSees = await device.chat(["--as", "alice", "history", "bob"])
        #expect(aliceSees.lines.last?.hasSuffix("bob: from the tunnel") == true, "exactly once: \(aliceSees)")
        #expect(aliceSees.lines.filter { $0.contains("from the tunnel") }.count == 1)
    }

    @Test func syncStatusListenAndClearCache() async throws {
        let device = try await device()
        _ = await device.login("alice")
        _ = await device.login("bob")
        let firstSync = await device.chat(["--as", "bob", "sync"])
        #expect(
            firstSync.status == 0 && firstSync.lines.contains("[####################] 100%")
                && firstSync.lines.last?.hasPrefix("outcome:") == true,
            "\(firstSync)")
        _ = await device.chat(["--as", "alice", "send", "bob", "while", "bob", "was", "away"])
        let second = await device.chat(["--as", "bob", "--json", "sync"])
        #expect(second.output.contains("\"outcome\":\"caughtUp\""), "\(second)")
        let status = await device.chat(["--as", "bob", "--json", "status"])
        let fields = try #require(
            try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any], "\(status)")
        #expect(
            fields["connection"] as? String == "connected" && (fields["lastSync"] as? Int ?? 0) > 0
                && (fields["cacheBytes"] as? Int ?? 0) > 0)
        #expect(
            fields["pending"] as? Int == 0 && (fields["encryption"] as? [String: Any])?["atRest"] as? String == "NONE")

        // Send until the listener (which needs a moment to connect) has heard one.
        let listen =
            await withTaskGroup(of: Run?.self) { group -> Run? in
                group.addTask { await device.chat(["--as", "bob", "--json", "listen", "--count", "1"]) }
                group.addTask {
                    for attempt in 0..<200 where !Task.isCancelled {
                        _ = await device.chat(["--as", "alice", "send", "bob", "ping \(attempt)"])
                    }
                    return nil
                }
                for await run in group {
                    if let run {
                        group.cancelAll()
                        return run
                    }
                }
                return nil
            } ?? Run(status: -1, output: "", errors: "listen never finished")
        #expect(
            listen.status == 0 && listen.output.contains("\"event\":\"message\"") && listen.output.contains("ping"),
            "\(listen)")

        let cleared = await device.chat(["--as", "bob", "clear-cache"])
        #expect(cleared.status == 0 && cleared.output.hasPrefix("cache cleared"), "\(cleared)")

        let logout = await device.chat(["--as", "bob", "--json", "logout"])
        #expect(logout.status == 0 && logout.output.contains("\"event\":\"logout\""), "\(logout)")
        #expect(logout.output.contains("\"tokenRevoked\":true"), "chatd revoked it: \(logout)")
        let (afterLogout, _) = try await device.server.request("GET", Endpoints.me, token: device.tokens["bob"]!)
        #expect(afterLogout == 401, "the old token no longer works")
        let bobsFolder = device.data.appendingPathComponent("bob")
        #expect(
            !FileManager.default.fileExists(atPath: bobsFolder.appendingPathComponent("tokens/chat.bob.token").path),
            "the token is forgotten")
        #expect(
            !FileManager.default.fileExists(atPath: bobsFolder.appendingPathComponent("chat/bob").path),
            "the cache is wiped")
        #expect(await device.chat(["--as", "bob", "status"]).errors.contains("no token for bob"))
    }
}

/// `chat open` in a real terminal (tmux): history, sending, receiving, and going offline.
@Suite(.timeLimit(.minutes(2))) struct ChatOpenTests {
    /// A tmux session running one command; the pane's text is read with capture-pane.
    struct Terminal {
        let name = "chat-test-\(UUID().uuidString.prefix(8))"

        /// Each terminal has a tmux server of its own (`-L`), so a developer's tmux is untouched.
        func tmux(_ arguments: [String]) async -> String {
            await Subprocess.run("/usr/bin/tmux", ["-L", name] + arguments).output
        }

        func start(_ command: [String]) async {
            let line = command.map { "'\($0)'" }.joined(separator: " ")
            _ = await tmux(["new-session", "-d", "-s", name, "-x", "160", "-y", "50", line])
        }

        func type(_ text: String) async { _ = await tmux(["send-keys", "-t", name, text, "Enter"]) }

        func screen() async -> String { await tmux(["capture-pane", "-p", "-t", name, "-S", "-200"]) }

        /// Reads the pane until `text` shows (each read is a tmux round trip; bounded).
        func waitFor(_ text: String) async -> Bool {
            for _ in 0..<2_000 where await screen().contains(text) { return true }
            return false
        }

        /// Stops this terminal's tmux server and removes its socket.
        func close() async {
            _ = await tmux(["kill-server"])
            let directory = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
            try? FileManager.default.removeItem(atPath: "\(directory)/tmux-\(getuid())/\(name)")
        }

        /// Records an issue, with the screen, when `text` does not show.
        func expect(_ text: String, _ what: String) async {
            if await waitFor(text) { return }
            let screen = await screen()
            Issue.record("\(what): \(text.debugDescription) never showed:\n\(screen)")
        }
    }

    @Test func openShowsHistorySendsReceivesAndKeepsWorkingOffline() async throws {
        let cli = ChatCLITests()
        let device = try await cli.device()
        _ = await device.login("alice")
        _ = await device.login("bob")
        _ = await device.chat(["--as", "alice", "send", "bob", "earlier"])
        let terminal = Terminal()
        await terminal.start([
            ChatCLITests.Device.binary.path, "--server", device.server.url.absoluteString,
            "--data", device.data.appendingPathComponent("bob").path, "--as", "bob", "open", "alice"
        ])
        await terminal.expect("alice: earlier", "history")

        await terminal.type("hello from bob")
        await terminal.expect("✓ sent: ", "sent")
        _ = try await device.server.send("live one", from: device.tokens["alice"]!, to: "bob")
        await terminal.expect("alice: live one", "received")

        device.server.stop()
        await terminal.expect("— offline", "offline")
        await terminal.type("while offline")
        await terminal.expect("bob: while offline (pending)", "pending")
        try device.server.restart()
        await terminal.expect("— online", "back online")
        await terminal.expect("bob: while offline\n", "the queued message went out")
        let aliceSees = await device.chat(["--as", "alice", "history", "bob"])
        #expect(aliceSees.output.contains("bob: while offline"), "sent after the reconnect: \(aliceSees)")
        await terminal.type("/quit")
        await terminal.close()
    }
}
