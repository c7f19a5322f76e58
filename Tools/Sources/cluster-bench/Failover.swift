import ChatTesting
import Foundation
import OfflineChat
import OfflineChatProtocol

/// Part 3: `phones` SDK clients (chatd's and the SDK's default timings) through HAProxy. Each
/// round kills (SIGKILL) whichever of nodes 1 and 2 holds more of their sockets, sends each
/// phone a message through node 0 right after, and measures from the kill until each phone has
/// heard its message: a phone whose socket died with the node reconnects through HAProxy to
/// another and catches up from its sync point; the others hear theirs over the bus.
struct Failover {
    let cluster: LiveCluster
    let phones: Int
    /// The SDK's `connectionSettleDelay` (ms), nil for its default.
    let settleDelay: Int64?

    enum Event: Sendable {
        case heard(uid: String, text: String, at: UInt64)
        case dropped(uid: String)
        case synced(uid: String)
    }

    final class Ears: MessageListener, ConnectionListener, ConversationListener, Sendable {
        let uid: String
        let events: Events<Event>
        init(_ uid: String, _ events: Events<Event>) { (self.uid, self.events) = (uid, events) }
        func onTextMessageReceived(_ message: TextMessage) {
            events.send(.heard(uid: uid, text: message.text, at: now()))
        }
        func onDisconnected() { events.send(.dropped(uid: uid)) }
        func onSyncServerFinish(reInstall: Bool) { events.send(.synced(uid: uid)) }
    }

    /// Names this run's users apart from another run's.
    var tag: String { settleDelay.map { "settle\($0)" } ?? "default" }

    func run(kills: Int) async throws -> String {
        let events = Events<Event>()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cluster-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        let sender = try await cluster.nodes[0].user("\(tag)-sender")
        var clients: [(ChatClient, Ears)] = []
        for index in 0..<phones {
            let uid = "\(tag)-p\(index)"
            let token = try await cluster.nodes[0].user(uid)
            var offline = OfflineConfig()
            offline.enabled = true
            var config = ChatConfig(
                appID: "bench", server: cluster.url, storageDirectory: storage.appendingPathComponent(uid),
                offline: offline, callbackQueue: DispatchQueue(label: uid),
                logger: StandardErrorLogger(minimumLevel: .error))
            if let settleDelay { config.connectionSettleDelay = settleDelay }
            let client = try ChatClient(config: config)
            let ears = Ears(uid, events)
            client.addMessageListener("bench", ears)
            client.addConnectionListener("bench", ears)
            client.addConversationListener("bench", ears)
            _ = try await client.login(uid: uid, authToken: token)
            clients.append((client, ears))
        }
        var synced = Set<String>()
        guard
            await events.until(
                seconds: 60,
                { event in
                    if case .synced(let uid) = event { synced.insert(uid) }
                    return synced.count == phones
                })
        else { throw LiveChatd.Failure("only \(synced.count) of \(phones) phones finished their first sync") }

        var (moved, stayed) = (Sample(), Sample())
        for round in 0..<kills {
            let victim = try await busiestNode()
            let killed = now()
            cluster.nodes[victim].kill()
            let node = cluster.nodes[0]
            let phones = phones
            try await concurrently(phones) { index in
                let request = SendMessageRequest(
                    muid: "k\(round)-\(index)", receiver: "\(tag)-p\(index)", text: "round \(round)")
                let (status, _) = try await node.request("POST", "/v1/messages", token: sender, json: request)
                guard status == 201 else { throw LiveChatd.Failure("a send answered \(status)") }
            }
            var (dropped, heard) = (Set<String>(), [String: Double]())
            let complete = await events.until(seconds: 60) { event in
                switch event {
                case .dropped(let uid): dropped.insert(uid)
                case .heard(let uid, "round \(round)", let at) where heard[uid] == nil:
                    heard[uid] = Double(at - killed) / 1e6
                default: break
                }
                return heard.count == phones
            }
            guard complete else {
                throw LiveChatd.Failure("round \(round): \(phones - heard.count) phones never heard their message")
            }
            for (uid, milliseconds) in heard {
                if dropped.contains(uid) {
                    moved.values.append(milliseconds)
                } else {
                    stayed.values.append(milliseconds)
                }
            }
            try cluster.nodes[victim].restart()
        }
        for (client, _) in clients { client.logout() }
        return """
            3. a node killed \(kills) times under \(phones) SDK phones (connectionSettleDelay \(settleDelay.map { "\($0) ms" } ?? "default")), until each heard the message sent right after:
               phones whose socket died with the node (reconnect through HAProxy, catch up): \(moved)
               phones on the surviving nodes (over the bus):                                  \(stayed)
            """
    }

    /// Whichever of nodes 1 and 2 has more realtime sockets open (node 0 sends).
    private func busiestNode() async throws -> Int {
        var counts: [Int: Int] = [:]
        for index in 1...2 {
            let (_, data) = try await cluster.nodes[index].request("GET", "/metrics")
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first {
                $0.hasPrefix("chatd_realtime_sockets ")
            }
            counts[index] = line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        }
        return counts[1]! >= counts[2]! ? 1 : 2
    }
}
