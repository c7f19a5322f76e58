import ChatProtocol
import Foundation
import Glibc
import WebSocket

/// The state of the realtime thread: its sockets and their buffers. Lives on that thread only.
struct RealtimeLoop {
    final class Client {
        let socket: UpgradedSocket
        let uid: String
        var parser: WebSocketParser
        var output: [UInt8] = []
        var lastHeard: UInt64
        var lastPing: UInt64
        /// A close frame was queued; drop once it is flushed.
        var closing = false
        var dead = false

        init(socket: UpgradedSocket, uid: String, now: UInt64, maxMessageSize: Int) {
            self.socket = socket
            self.uid = uid
            self.parser = WebSocketParser(role: .server, maxMessageSize: maxMessageSize)
            self.lastHeard = now
            self.lastPing = now
        }
    }

    let hub: RealtimeHub
    var clients: [Client] = []
    var running = true

    init(hub: RealtimeHub) { self.hub = hub }

    var heartbeat: UInt64 { UInt64(hub.configuration.heartbeatSeconds * 1e9) }

    mutating func run() {
        while running {
            var fds = [pollfd(fd: hub.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
            for client in clients {
                let events = POLLIN | (client.output.isEmpty ? 0 : POLLOUT)
                fds.append(pollfd(fd: client.socket.fd, events: Int16(events), revents: 0))
            }
            let timeout = Int32(max(10, min(1000, hub.configuration.heartbeatSeconds * 250)))
            _ = poll(&fds, nfds_t(fds.count), timeout)
            for command in hub.takeCommands() { handle(command) }
            let now = hub.monotonicNow()
            for (index, client) in clients.enumerated() where index + 1 < fds.count {
                let events = fds[index + 1].revents
                if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 { receive(client, now: now) }
                checkHeartbeat(client, now: now)
                if !client.output.isEmpty { flush(client) }
                if client.closing && client.output.isEmpty { client.dead = true }
            }
            sweep()
        }
        for client in clients {
            enqueue(Frame.close(.goingAway, reason: "chatd is shutting down").encoded(), to: client)
            flush(client)
            client.dead = true
        }
        sweep()
    }

    mutating func handle(_ command: RealtimeHub.Command) {
        switch command {
        case .register(let socket, let uid, let hello):
            _ = fcntl(socket.fd, F_SETFL, fcntl(socket.fd, F_GETFL) | O_NONBLOCK)
            let client = Client(socket: socket, uid: uid, now: hub.monotonicNow(), maxMessageSize: hub.configuration.maxMessageSize)
            clients.append(client)
            hub.connectionCount.add(1, ordering: .relaxed)
            client.parser.append(socket.initialBytes)
            enqueue(hello, to: client)
        case .broadcast(let frame, let audience):
            let targets = Set(audience)
            for client in clients where targets.contains(client.uid) { enqueue(frame, to: client) }
        case .stop:
            running = false
        }
    }

    /// Queues bytes; a socket over its backlog limit is dropped instead of buffered further.
    func enqueue(_ bytes: [UInt8], to client: Client) {
        guard !client.dead, !client.closing || bytes.first == 0x88 else { return }
        if client.output.count + bytes.count > hub.configuration.maxBufferedBytes {
            client.dead = true
            return
        }
        client.output += bytes
    }

    func flush(_ client: Client) {
        guard !client.dead else { return }
        let written = client.output.withUnsafeBytes { send(client.socket.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written > 0 {
            client.output.removeFirst(written)
        } else if written < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            client.dead = true
        }
    }

    func receive(_ client: Client, now: UInt64) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let count = buffer.withUnsafeMutableBytes { recv(client.socket.fd, $0.baseAddress, $0.count, 0) }
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            client.dead = true
            return
        }
        guard count > 0 else { return }
        client.lastHeard = now
        client.parser.append(buffer.prefix(count))
        do {
            while let message = try client.parser.next() { handle(message, from: client) }
        } catch {
            enqueue(Frame.close(error.code, reason: error.reason).encoded(), to: client)
            client.closing = true
        }
    }

    func handle(_ message: Message, from client: Client) {
        switch message {
        case .ping(let payload): enqueue(Frame(opcode: .pong, payload: payload).encoded(), to: client)
        case .pong: break
        case .close(let code, _):
            if !client.closing { enqueue(Frame.close(code == .noStatus ? .normal : code).encoded(), to: client) }
            client.closing = true
        case .binary:
            enqueue(Frame.close(.unsupportedData, reason: "send JSON text messages").encoded(), to: client)
            client.closing = true
        case .text(let text):
            guard let envelope = try? JSONDecoder().decode(RealtimeEnvelope.self, from: Data(text.utf8)),
                  envelope.type == .typing, var typing = envelope.typing else {
                enqueue(Frame.close(.unsupportedData, reason: "expected a typing envelope").encoded(), to: client)
                client.closing = true
                return
            }
            typing.sender = client.uid
            guard let frame = RealtimeHub.frame(RealtimeEnvelope(type: .typing, typing: typing)) else { return }
            for peer in clients where peer.uid == typing.receiver { enqueue(frame, to: peer) }
        }
    }

    func checkHeartbeat(_ client: Client, now: UInt64) {
        if now - client.lastHeard > heartbeat * 5 / 2 {
            client.dead = true
        } else if now - client.lastPing >= heartbeat {
            client.lastPing = now
            enqueue(Frame(opcode: .ping, payload: []).encoded(), to: client)
        }
    }

    mutating func sweep() {
        let dead = clients.filter(\.dead)
        guard !dead.isEmpty else { return }
        clients.removeAll(where: \.dead)
        for client in dead {
            client.socket.close()
            hub.connectionCount.subtract(1, ordering: .relaxed)
        }
    }
}
