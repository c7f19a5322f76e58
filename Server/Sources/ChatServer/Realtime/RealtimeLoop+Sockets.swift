import Foundation
import Glibc
import OfflineChatProtocol
import OfflineChatWebSocket

/// A socket's bytes in and out: queueing frames, flushing, reading, the frames a client may
/// send (pongs, closes, typing), and heartbeats.
extension RealtimeLoop {
    func enqueue(_ bytes: [UInt8], to client: Client) { enqueue([bytes], to: client) }

    /// Queues a frame, made of `parts`, for a socket. A socket over its own cap is dropped (its
    /// client resumes from its cursor); so, when all sockets together are over the global
    /// budget, is the one with the longest backlog (a reader that stopped reading, not whoever
    /// is next).
    func enqueue(_ parts: [[UInt8]], to client: Client) {
        guard !client.dead, !client.closing else { return }
        let size = parts.reduce(0) { $0 + $1.count }
        if client.output.count + size > hub.configuration.maxBufferedBytes {
            drop(client)
            return
        }
        for part in parts { client.output.append(part) }
        work.queued += size
        work.unflushed.insert(client.id)
        while work.queued > hub.configuration.maxTotalBufferedBytes,
            let slowest = clients.values.filter({ !$0.dead }).max(by: { $0.output.count < $1.output.count }),
            !slowest.output.isEmpty
        {
            drop(slowest)
        }
    }

    /// A socket that cannot keep up: closed without ceremony, its backlog forgotten.
    func drop(_ client: Client) {
        guard !client.dead else { return }
        client.dead = true
        work.queued -= client.output.count
        client.output = OutputQueue()
    }

    func flush(_ client: Client) {
        guard !client.dead else { return }
        let before = client.output.count
        let healthy = client.output.send(to: client.socket.fd, through: &work.scratch)
        work.queued -= before - client.output.count
        if !healthy { drop(client) }
    }

    func receive(_ client: Client, now: UInt64) {
        let count = work.received.withUnsafeMutableBytes { recv(client.socket.fd, $0.baseAddress, $0.count, 0) }
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            client.dead = true
            return
        }
        guard count > 0 else { return }
        client.lastHeard = now
        parse(work.received.prefix(count), from: client)
    }

    /// Feeds bytes to the client's parser and handles each message; nothing after a close.
    func parse(_ bytes: some Sequence<UInt8>, from client: Client) {
        client.parser.append(bytes)
        do {
            while !client.closing, let message = try client.parser.next() { handle(message, from: client) }
        } catch {
            close(client, error.code, error.reason)
        }
    }

    /// Queues one close frame (never a second) and drops the socket once it is flushed.
    func close(_ client: Client, _ code: CloseCode, _ reason: String) {
        guard !client.closing else { return }
        enqueue(Frame.close(code, reason: reason).encoded(), to: client)
        client.closing = true
    }

    func handle(_ message: Message, from client: Client) {
        switch message {
        case .ping(let payload): enqueue(Frame(opcode: .pong, payload: payload).encoded(), to: client)
        case .pong: break
        case .close(let code, _):
            close(client, code == .noStatus ? .normal : code, "")
        case .binary:
            close(client, .unsupportedData, "send JSON text messages")
        case .text(let text):
            // Read as what a client may send, nothing more (linear, a few levels deep at most).
            guard let frame = try? RealtimeClientFrame(json: Data(text.utf8)),
                frame.type == RealtimeEnvelope.Kind.typing.rawValue, var typing = frame.typing
            else {
                close(client, .unsupportedData, "expected a typing envelope")
                return
            }
            switch client.typingBudget.take(at: hub.monotonicNow()) {
            case .send: break
            case .drop: return
            case .close: return close(client, .policyViolation, "typing frames too fast")
            }
            typing.sender = client.uid
            if typing.receiverType == .group {
                // One frame to each member's socket here, one bus message for the other nodes:
                // nothing here costs a step per member of the group. A group larger than
                // `maxTypingGroup` hears no typing at all (a keystroke there would be a frame to
                // each of thousands of sockets).
                guard let members = groups[typing.receiver], members.contains(client.uid),
                    members.count <= Self.maxTypingGroup,
                    let frame = RealtimeHub.frame(RealtimeEnvelope(type: .typing, typing: typing))
                else { return }
                deliverGroupTyping(frame, guid: typing.receiver, sender: client.uid)
                hub.bus?.publishGroupTyping(frame, guid: typing.receiver, sender: client.uid)
            } else {
                guard !isBlocked(client.uid, typing.receiver),
                    let frame = RealtimeHub.frame(RealtimeEnvelope(type: .typing, typing: typing))
                else { return }
                for peer in byUser[typing.receiver] ?? [] { enqueue(frame, to: peer) }
                hub.bus?.publishTyping(frame, to: typing.receiver)
            }
        }
    }

    /// A group typing frame to the sockets here of the group's members other than its sender.
    func deliverGroupTyping(_ frame: [UInt8], guid: String, sender: String) {
        guard let members = groups[guid] else { return }
        for member in members where member != sender {
            for peer in byUser[member] ?? [] { enqueue(frame, to: peer) }
        }
    }

    func checkHeartbeat(_ client: Client, now: UInt64, nowSeconds: Int64) {
        if nowSeconds >= client.session.expiresAt {
            close(client, .policyViolation, "token expired")
        } else if now - client.lastHeard > heartbeat * 5 / 2 {
            client.dead = true
        } else if now - client.lastPing >= heartbeat {
            client.lastPing = now
            enqueue(Frame(opcode: .ping, payload: []).encoded(), to: client)
        }
    }
}
