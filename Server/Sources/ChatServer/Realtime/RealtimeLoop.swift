import Foundation
import Glibc
import OfflineChatProtocol
import OfflineChatWebSocket

/// The state of the realtime thread: its sockets and their buffers. Lives on that thread only.
struct RealtimeLoop {
    final class Client {
        let socket: UpgradedSocket
        let session: RealtimeSession
        var uid: String { session.uid }
        var parser: WebSocketParser
        var output = OutputQueue()
        var lastHeard: UInt64
        var lastPing: UInt64
        /// Which `attach` made it (its hello finds it by that).
        let id: Int
        /// The positions sent and those waiting for a gap to close.
        var order = ChangeOrder()
        /// Its positions after the last change sent (each frame's cursor); nil until the hello.
        var logs: LogPositions?
        /// Each group it follows, its changes put in the group's order (`order` carries the
        /// user's own log: their own changes and the bounds of their memberships).
        var groupOrders: [String: ChangeOrder] = [:]
        /// Group changes that came before the hello (its positions were read after the socket
        /// registered): each goes to its group once the hello says which the socket follows.
        var beforeHello: [Delivery] = []
        /// Memberships that began (at these group positions) while an earlier one of the same
        /// group had not yet ended on this socket: each starts once the one before ends.
        var rejoins: [String: [Int64]] = [:]

        /// Starts following `group` after position `start`.
        func follow(_ group: String, after start: Int64, now: UInt64, in followers: Followers) {
            if groupOrders[group] == nil { followers.add(self, to: group) }
            var order = ChangeOrder()
            _ = order.start(at: start, now: now)
            groupOrders[group] = order
            logs?.groups[group] = start
        }

        /// Stops following `group`.
        func unfollow(_ group: String, in followers: Followers) {
            guard groupOrders.removeValue(forKey: group) != nil else { return }
            followers.remove(self, from: group)
        }
        /// Typing frames it may still send (`TypingBudget`).
        var typingBudget = TypingBudget()
        /// A close frame was queued; drop once it is flushed.
        var closing = false
        var dead = false

        init(socket: UpgradedSocket, session: RealtimeSession, id: Int, now: UInt64, maxMessageSize: Int) {
            self.socket = socket
            self.id = id
            self.session = session
            self.parser = WebSocketParser(role: .server, maxMessageSize: maxMessageSize)
            self.lastHeard = now
            self.lastPing = now
        }
    }

    let hub: RealtimeHub
    var clients: [Client] = []
    /// Each group's sockets here, so a group's change costs its followers, not every socket.
    let followers: Followers
    /// Unsent bytes over all sockets (each counts what it queued, shared frames included).
    let queued = ByteCount()
    var running = true
    /// When the last periodic catch-up ran (monotonic nanoseconds).
    var lastCatchUp: UInt64 = 0
    /// When the sockets' tokens were last checked against the database (monotonic nanoseconds).
    var lastTokenCheck: UInt64 = 0
    /// Token hashes revoked while this loop ran: a socket opened with one (its upgrade checked
    /// the token just before the revocation) is refused when it registers. Emptied when large;
    /// the periodic token check is the backstop.
    var revoked: Set<String> = []
    static let maxRevokedKept = 10_000
    /// An inbox read is under way off this thread (`RealtimeHub.readMissing`); its pages come
    /// back as `.filled`. One at a time: gaps and catch-ups wait for it.
    var reading = false
    /// A catch-up was asked for while a read was under way: it runs when that one is back.
    var catchUpWanted = false
    /// Blocked pairs as "blocker\nblocked": loaded once, then kept current by `.block`
    /// commands, so typing frames never wait on the database.
    var blocks: Set<String>
    /// guid → members, kept the same way for group typing.
    var groups: [String: Set<String>] = [:]

    init(hub: RealtimeHub) {
        self.hub = hub
        followers = Followers(bus: hub.bus)
        blocks = Set((try? hub.store.allBlocks()) ?? [])
        for (guid, uid) in (try? hub.store.allGroupMembers()) ?? [] { groups[guid, default: []].insert(uid) }
    }

    func isBlocked(_ a: String, _ b: String) -> Bool { blocks.contains("\(a)\n\(b)") || blocks.contains("\(b)\n\(a)") }

    var heartbeat: UInt64 { UInt64(hub.configuration.heartbeatSeconds * 1e9) }

    mutating func run() {
        while running {
            var fds = [pollfd(fd: hub.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
            for client in clients {
                let events = POLLIN | (client.output.isEmpty ? 0 : POLLOUT)
                fds.append(pollfd(fd: client.socket.fd, events: Int16(events), revents: 0))
            }
            // Idle, the loop still wakes for pings and, with a bus, for each catch-up period.
            let catchUpMilliseconds = hub.bus == nil ? 1000 : hub.configuration.catchUpSeconds * 1000
            let timeout = Int32(max(10, min(1000, hub.configuration.heartbeatSeconds * 250, catchUpMilliseconds)))
            _ = poll(&fds, nfds_t(fds.count), timeout)
            for command in hub.takeCommands() { handle(command) }
            let now = hub.monotonicNow()
            fillGaps(now: now)
            if hub.bus != nil, now - lastCatchUp >= UInt64(hub.configuration.catchUpSeconds * 1e9) {
                lastCatchUp = now
                catchUp()
                hub.sharePresence()
            }
            if now - lastTokenCheck >= UInt64(hub.configuration.tokenCheckSeconds * 1e9) {
                lastTokenCheck = now
                hub.closeLapsed(
                    Set(clients.filter { !$0.dead && !$0.closing }.map(\.session.tokenHash)), periodic: true)
            }
            let nowSeconds = hub.store.clock.now() / 1000
            for (index, client) in clients.enumerated() where index + 1 < fds.count {
                let events = fds[index + 1].revents
                if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 { receive(client, now: now) }
                checkHeartbeat(client, now: now, nowSeconds: nowSeconds)
                if !client.output.isEmpty { flush(client) }
                if client.closing && client.output.isEmpty { client.dead = true }
            }
            sweep()
        }
        for client in clients {
            close(client, .goingAway, "chatd is shutting down")
            flush(client)
            client.dead = true
        }
        sweep()
    }

    mutating func handle(_ command: RealtimeHub.Command) {
        switch command {
        case .register(let socket, let session, let id):
            // One user may hold only so many sockets (one token opening a thousand made chatd
            // unreachable): the next is told why and closed, before it counts anywhere.
            guard !revoked.contains(session.tokenHash) else {
                return refuse(socket, of: session, "token revoked")
            }
            guard
                clients.count(where: { $0.uid == session.uid && !$0.closing && !$0.dead })
                    < hub.configuration.maxSocketsPerUser
            else {
                return refuse(socket, of: session, "too many realtime sockets for this user")
            }
            _ = fcntl(socket.fd, F_SETFL, fcntl(socket.fd, F_GETFL) | O_NONBLOCK)
            let client = Client(
                socket: socket, session: session, id: id, now: hub.monotonicNow(),
                maxMessageSize: hub.configuration.maxMessageSize)
            clients.append(client)
            hub.connectionCount.add(1, ordering: .relaxed)
            hub.presence.connected(session.uid)
            // Frames that came in the same packet as the handshake.
            parse(socket.initialBytes, from: client)
        case .block(let block, let active):
            let key = "\(block.blocker)\n\(block.blocked)"
            if active { blocks.insert(key) } else { blocks.remove(key) }
        case .membership(let guid, let uid, let member):
            if member { groups[guid, default: []].insert(uid) } else { groups[guid]?.remove(uid) }
        case .dropGroup(let guid):
            groups[guid] = nil
        case .catchUp:
            catchUp()
        case .filled(let pages):
            filled(pages, now: hub.monotonicNow())
        case .typing(let uid, let frame):
            for client in clients where client.uid == uid { enqueue(frame, to: client) }
        case .groupTyping(let guid, let sender, let frame):
            deliverGroupTyping(frame, guid: guid, sender: sender)
        case .revoke(let hash):
            if revoked.count >= Self.maxRevokedKept { revoked.removeAll() }
            revoked.insert(hash)
            for client in clients where client.session.tokenHash == hash {
                close(client, .policyViolation, "token revoked")
            }
        case .hello(let id, let logs):
            guard let client = clients.first(where: { $0.id == id && !$0.dead && !$0.closing }) else { return }
            client.logs = logs
            enqueue(hub.helloFrame(uid: client.uid, logs: logs), to: client)
            let now = hub.monotonicNow()
            for (group, start) in logs.groups { client.follow(group, after: start, now: now, in: followers) }
            send(client.order.start(at: logs.user, now: now), to: client)
            for early in client.beforeHello {
                guard let group = early.group?.conversationId,
                    let ready = client.groupOrders[group]?.receive(early, now: now)
                else { continue }
                send(ready, of: group, to: client)
            }
            client.beforeHello = []
        case .abandon(let id):
            for client in clients where client.id == id {
                close(client, .internalError, "cannot read your position; reconnect")
            }
        case .deliver(let body, let positions, let group):
            deliver(body, at: positions, group: group)
        case .stop:
            running = false
        }
    }

    /// Closes a socket that may not register (1008, `reason`), before it counts anywhere.
    func refuse(_ socket: UpgradedSocket, of session: RealtimeSession, _ reason: String) {
        let refusal = Frame.close(.policyViolation, reason: reason).encoded()
        _ = refusal.withUnsafeBytes { write(socket.fd, $0.baseAddress, $0.count) }
        socket.close()
        hub.bus?.release(session.uid)
    }

    /// Hands a change to its readers' sockets, each of which sends what is now in order: to
    /// the sockets of the users whose own log has it, by their position there, and a group's
    /// change to every socket that follows the group, by its position there.
    func deliver(_ body: String, at positions: [Position], group: GroupPlace?) {
        var wanted: [String: Int64] = [:]
        for position in positions { wanted[position.uid] = position.pts }
        let now = hub.monotonicNow()
        let bytes = Array(body.utf8)  // shared by every reader's frame
        defer {
            if let group {
                let delivery = Delivery(pts: group.pts, body: body, bytes: bytes, group: group)
                // A socket not yet past its hello follows nothing yet: it keeps the change.
                for client in clients where client.logs == nil && !client.dead && !client.closing {
                    client.beforeHello.append(delivery)
                    if client.beforeHello.count > ChangeOrder.maxHeld {
                        close(client, Self.missedChanges, "missed changes; resume from your cursor")
                    }
                }
                for client in followers.of(group.conversationId)
                where !client.dead && !client.closing && client.groupOrders[group.conversationId] != nil {
                    let ready = client.groupOrders[group.conversationId]!.receive(delivery, now: now)
                    send(ready, of: group.conversationId, to: client)
                    if client.groupOrders[group.conversationId]?.overflowed == true {
                        close(client, Self.missedChanges, "missed changes; resume from your cursor")
                    }
                }
            }
        }
        for client in clients where !wanted.isEmpty && !client.dead && !client.closing {
            guard let pts = wanted[client.uid] else { continue }
            send(client.order.receive(Delivery(pts: pts, body: body, bytes: bytes, group: group), now: now), to: client)
            if client.order.overflowed { close(client, Self.missedChanges, "missed changes; resume from your cursor") }
        }
    }

    /// Sends changes of the user's log now in order, as frames: the user's own. A group's
    /// change there (the bound of one of the user's memberships, or a copy an older chatd wrote)
    /// only moves the user position, the group's log bringing it; one that starts a membership
    /// starts following the group.
    func send(_ changes: [Delivery], to client: Client) {
        for change in changes {
            guard var logs = client.logs else { continue }
            logs.user = change.pts
            client.logs = logs
            guard let group = change.group else {
                enqueue(
                    hub.changeFrame(body: change.bytes, seq: change.pts, cursor: hub.store.cursor(logs)),
                    to: client)
                continue
            }
            guard group.span == .opens(client.uid) else { continue }
            if client.groupOrders[group.conversationId] == nil {
                client.follow(group.conversationId, after: group.pts - 1, now: hub.monotonicNow(), in: followers)
            } else {
                client.rejoins[group.conversationId, default: []].append(group.pts - 1)
            }
        }
    }

    /// Sends a group's changes now in order to a socket that follows it, each frame with the
    /// change's group position as `seq` and the socket's cursor after it. The change that ends
    /// the user's membership is the last: the socket stops following the group, until a
    /// membership that began since (`rejoins`), which takes the rest. The group stays in the
    /// cursor at that change (its user position may not have reached the bound yet; a page
    /// drops the group once it is past every membership's end).
    func send(_ changes: [Delivery], of group: String, to client: Client) {
        for (index, change) in changes.enumerated() {
            guard var logs = client.logs, client.groupOrders[group] != nil else { return }
            let ends = change.group?.ends(for: client.uid) == true
            if ends, let start = client.rejoins[group]?.first {
                // The next membership's start goes into this frame's cursor already.
                client.rejoins[group]?.removeFirst()
                if client.rejoins[group]?.isEmpty == true { client.rejoins[group] = nil }
                client.unfollow(group, in: followers)
                client.follow(group, after: start, now: hub.monotonicNow(), in: followers)
                logs.groups[group] = start
                client.logs = logs
                enqueue(
                    hub.changeFrame(body: change.bytes, seq: change.pts, cursor: hub.store.cursor(logs)), to: client)
                var ready: [Delivery] = []
                for rest in changes[(index + 1)...] {
                    ready += client.groupOrders[group]?.receive(rest, now: hub.monotonicNow()) ?? []
                }
                return send(ready, of: group, to: client)
            }
            logs.groups[group] = change.pts
            client.logs = logs
            enqueue(hub.changeFrame(body: change.bytes, seq: change.pts, cursor: hub.store.cursor(logs)), to: client)
            if ends {
                client.unfollow(group, in: followers)
                return
            }
        }
    }

    /// Reads from the inbox what a socket has waited for longer than `gapWaitSeconds` (a
    /// change published out of order that never came, a lost bus message).
    mutating func fillGaps(now: UInt64) {
        guard !reading else { return }
        let wait = UInt64(hub.configuration.gapWaitSeconds * 1e9)
        func late(_ order: ChangeOrder) -> Bool {
            order.conflicted || order.heldSince.map { now - $0 >= wait } == true
        }
        let due = clients.filter { client in
            guard !client.dead, !client.closing, client.order.position != nil else { return false }
            return late(client.order) || client.groupOrders.values.contains(where: late)
        }
        read(due, headsFirst: false) { late($0) }
    }

    /// Brings every socket behind its user's head up to it from the inbox: after the bus
    /// reconnects, and every `catchUpSeconds` with a bus (a lost message with nothing after it).
    mutating func catchUp() {
        guard !reading else {
            catchUpWanted = true
            return
        }
        read(clients.filter { !$0.dead && !$0.closing && $0.order.position != nil }, headsFirst: true) { _ in true }
    }

    /// Asks for the inbox after each socket's position, and each group's log after its
    /// position for the groups `groups` picks, read off this thread.
    private mutating func read(_ sockets: [Client], headsFirst: Bool, groups: (ChangeOrder) -> Bool) {
        guard !sockets.isEmpty else { return }
        reading = true
        hub.readMissing(
            sockets.map { client in
                MissingRead(
                    id: client.id, uid: client.uid, position: client.order.position!,
                    groups: client.groupOrders.compactMapValues { groups($0) ? $0.position : nil })
            }, headsFirst: headsFirst)
    }

    /// The pages `read` asked for: each socket sends what now follows its positions without a
    /// gap; one too far behind (nil) is closed (its client resumes from its cursor).
    mutating func filled(_ pages: [FilledRead], now: UInt64) {
        reading = false
        for page in pages {
            guard let client = clients.first(where: { $0.id == page.id && !$0.dead && !$0.closing }) else { continue }
            guard let changes = page.changes, !page.groups.values.contains(where: { $0 == nil }) else {
                close(client, Self.missedChanges, "missed changes; resume from your cursor")
                continue
            }
            send(client.order.fill(changes, now: now), to: client)
            for (group, changes) in page.groups {
                guard let changes, let ready = client.groupOrders[group]?.fill(changes, now: now) else { continue }
                send(ready, of: group, to: client)
            }
        }
        if catchUpWanted {
            catchUpWanted = false
            catchUp()
        }
    }

    /// The most members a group may have for its typing to be relayed (docs/GROUPS.md).
    static let maxTypingGroup = 1_000

    /// The close code of a socket that fell behind the changes it should have had.
    static let missedChanges = CloseCode(rawValue: 4001)

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
        queued.value += size
        while queued.value > hub.configuration.maxTotalBufferedBytes,
            let slowest = clients.filter({ !$0.dead }).max(by: { $0.output.count < $1.output.count }),
            !slowest.output.isEmpty
        {
            drop(slowest)
        }
    }

    /// A socket that cannot keep up: closed without ceremony, its backlog forgotten.
    func drop(_ client: Client) {
        guard !client.dead else { return }
        client.dead = true
        queued.value -= client.output.count
        client.output = OutputQueue()
    }

    func flush(_ client: Client) {
        guard !client.dead else { return }
        let before = client.output.count
        let healthy = client.output.send(to: client.socket.fd)
        queued.value -= before - client.output.count
        if !healthy { drop(client) }
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
        parse(buffer.prefix(count), from: client)
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
                for peer in clients where peer.uid == typing.receiver { enqueue(frame, to: peer) }
                hub.bus?.publishTyping(frame, to: typing.receiver)
            }
        }
    }

    /// A group typing frame to the sockets here of the group's members other than its sender.
    func deliverGroupTyping(_ frame: [UInt8], guid: String, sender: String) {
        guard let members = groups[guid] else { return }
        for peer in clients where peer.uid != sender && members.contains(peer.uid) { enqueue(frame, to: peer) }
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

    mutating func sweep() {
        let dead = clients.filter(\.dead)
        guard !dead.isEmpty else { return }
        clients.removeAll(where: \.dead)
        for client in dead {
            queued.value -= client.output.count  // what it never sent (none after `drop`)
            client.socket.close()
            hub.connectionCount.subtract(1, ordering: .relaxed)
            hub.presence.disconnected(client.uid)
            hub.bus?.release(client.uid)
            for group in client.groupOrders.keys { client.unfollow(group, in: followers) }
        }
    }
}

/// The sockets that follow each group (the loop's thread only); the first one here subscribes
/// this node to the group's bus subject, the last one leaving unsubscribes it.
final class Followers {
    private var byGroup: [String: [ObjectIdentifier: RealtimeLoop.Client]] = [:]
    private let bus: NatsBus?

    init(bus: NatsBus?) { self.bus = bus }

    func add(_ client: RealtimeLoop.Client, to group: String) {
        if byGroup[group] == nil { bus?.retainGroup(group) }
        byGroup[group, default: [:]][ObjectIdentifier(client)] = client
    }

    func remove(_ client: RealtimeLoop.Client, from group: String) {
        byGroup[group]?[ObjectIdentifier(client)] = nil
        if byGroup[group]?.isEmpty == true {
            byGroup[group] = nil
            bus?.releaseGroup(group)
        }
    }

    /// The group's sockets now (a copy: sending may change who follows).
    func of(_ group: String) -> [RealtimeLoop.Client] { byGroup[group].map { Array($0.values) } ?? [] }
}

/// A count the loop's non-mutating helpers update (the loop's thread only).
final class ByteCount {
    var value = 0
}
