import ChatTesting
import Foundation
import OfflineChatProtocol
import OfflineChatWebSocket

/// Part 1: realtime sockets for `users` users on node 1; sends through node 0 at a steady
/// rate, each from a random user to another, stamped with the time they were sent; a receiver's socket measures
/// how long its messages took (the change crossed NATS between the nodes).
struct CrossNodeDelivery {
    let cluster: LiveCluster
    let users: Int

    func run(sends: Int, rate: Int) async throws -> String {
        var tokens: [String] = []
        for index in 0..<users { tokens.append(try await cluster.nodes[0].user("u\(index)")) }
        let latencies = Events<Double>()
        var sockets: [WebSocketClient] = []
        for (index, token) in tokens.enumerated() {
            let socket = try WebSocketClient.connect(
                to: URL(string: "ws://127.0.0.1:\(cluster.nodes[1].port)/v1/realtime")!,
                headers: ["Authorization": "Bearer \(token)"])
            _ = try socket.receive()  // hello
            sockets.append(socket)
            listen(to: socket, as: "u\(index)", into: latencies)
        }
        let (sender, everyone, users) = (cluster.nodes[0], tokens, users)
        let answers = Events<Double>()
        let started = now()
        // Open loop: one send every 1/rate s whether or not the last one was answered, so the
        // latency is the cluster's at that load, not the queue of a saturated generator.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<sends {
                let due = started + UInt64(Double(index) * 1e9 / Double(rate))
                if due > now() { try await Task.sleep(nanoseconds: due - now()) }
                group.addTask {
                    let from = Int.random(in: 0..<users)
                    let to = (from + Int.random(in: 1..<users)) % users
                    let sent = now()
                    let request = SendMessageRequest(muid: "d\(index)", receiver: "u\(to)", text: "\(sent) hello")
                    let (status, _) = try await sender.request(
                        "POST", "/v1/messages", token: everyone[from], json: request)
                    guard status == 201 else { throw LiveChatd.Failure("a send answered \(status)") }
                    answers.send(Double(now() - sent) / 1e6)
                }
            }
            try await group.waitForAll()
        }
        let achieved = Double(sends) / (Double(now() - started) / 1e9)
        var answered = Sample()
        _ = await answers.until(seconds: 1) { latency in
            answered.values.append(latency)
            return answered.values.count == sends
        }
        var sample = Sample()
        let complete = await latencies.until(seconds: 30) { latency in
            sample.values.append(latency)
            return sample.values.count == sends
        }
        sockets.forEach { $0.shutdown() }
        return String(
            format: "1. cross-node send → delivery, %d sockets on node 1, %d sends through node 0 at %.0f/s: ",
            users, sends, achieved) + "\(sample)" + (complete ? "" : " — \(sends - sample.values.count) never arrived")
            + "\n   the sends' own answers (201 on node 0): \(answered)"
    }

    /// Reads `socket` on a thread of its own; the messages addressed to `uid` report their latency.
    private func listen(to socket: WebSocketClient, as uid: String, into latencies: Events<Double>) {
        let mine = "\"receiver\":\"\(uid)\""
        Thread {
            // A scan, not a decode: the client must not slow the measurement down.
            while case .text(let json) = try? socket.receive() {
                guard json.contains(mine), let text = json.range(of: "\"text\":\""),
                    let sent = UInt64(json[text.upperBound...].prefix { $0 != " " })
                else { continue }
                latencies.send(Double(now() - sent) / 1e6)
            }
        }.start()
    }
}
