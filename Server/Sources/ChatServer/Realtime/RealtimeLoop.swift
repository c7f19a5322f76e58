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
        /// Some change waits in one of its orders (`ChangeOrder.holds`).
        var holdsAny: Bool { order.holds || groupOrders.values.contains(where: \.holds) }
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
        /// Done with: the loop's sweep closes it.
        var dead = false {
            didSet { if dead && !oldValue { work.ended.append(id) } }
        }
        /// The poller watches it for room to write (its output did not all fit).
        var watchingWrites = false
        /// When its last `cursor` frame went (monotonic nanoseconds; 0: never).
        var lastCursor: UInt64 = 0
        private let work: LoopWork

        init(
            socket: UpgradedSocket, session: RealtimeSession, id: Int, now: UInt64, maxMessageSize: Int,
            work: LoopWork
        ) {
            self.socket = socket
            self.id = id
            self.work = work
            self.session = session
            self.parser = WebSocketParser(role: .server, maxMessageSize: maxMessageSize)
            self.lastHeard = now
            self.lastPing = now
        }
    }

    let hub: RealtimeHub
    /// The sockets by their id; the same by user, and those not yet past their hello.
    var clients: [Int: Client] = [:]
    var byUser: [String: [Client]] = [:]
    var greeting: [Int: Client] = [:]
    /// What this pass of the loop has to look at again (sockets to flush, to sweep, to fill).
    let work = LoopWork()
    let poller = SocketPoller()
    /// When heartbeats and expiries were last checked (monotonic nanoseconds).
    var lastHousekeeping: UInt64 = 0
    /// Each group's sockets here, so a group's change costs its followers, not every socket.
    let followers: Followers
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

    /// The poller's key of the hub's wake descriptor (sockets' keys are their ids, from 1).
    static let wakeKey = UInt64.max

    /// Runs until `.stop`: each pass waits for sockets or commands, handles them, and then
    /// looks only at the sockets that something happened to; every socket is visited once a
    /// housekeeping period (pings, dead peers, expired tokens), not at every wake.
    mutating func run() {
        poller.watch(hub.wakeDescriptor, key: Self.wakeKey)
        // Idle, the loop still wakes for pings and, with a bus, for each catch-up period.
        let catchUpMilliseconds = hub.bus == nil ? 1000 : hub.configuration.catchUpSeconds * 1000
        let period = max(10, min(1000, hub.configuration.heartbeatSeconds * 250, catchUpMilliseconds))
        while running {
            // An owed cursor frame is due within `cursorSeconds`: the wait is short meanwhile.
            let ready = poller.wait(milliseconds: Int32(work.cursorsOwed.isEmpty ? period : min(period, 50)))
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
                    Set(clients.values.filter { !$0.dead && !$0.closing }.map(\.session.tokenHash)), periodic: true)
            }
            for event in ready where event.key != Self.wakeKey {
                guard let client = clients[Int(event.key)] else { continue }
                if event.readable { receive(client, now: now) }
                if event.writable { work.unflushed.insert(client.id) }
            }
            if now - lastHousekeeping >= UInt64(period) * 1_000_000 {
                lastHousekeeping = now
                let nowSeconds = hub.store.clock.now() / 1000
                for client in clients.values { checkHeartbeat(client, now: now, nowSeconds: nowSeconds) }
            }
            sendOwedCursors(now: now)
            flushUnflushed()
            sweep()
        }
        for client in clients.values {
            close(client, .goingAway, "chatd is shutting down")
            flush(client)
            client.dead = true
        }
        sweep()
    }

    /// A change's frame for `client`, whose positions after it are `logs`: with its cursor, or,
    /// on a socket that reads `cursor` frames, without (one is owed to it).
    func frame(_ change: Delivery, for client: Client, after logs: LogPositions) -> [[UInt8]] {
        guard client.session.cursorFrames else {
            return hub.changeFrame(body: change.bytes, seq: change.pts, cursor: hub.store.cursor(logs))
        }
        work.cursorsOwed.insert(client.id)
        work.cursorsDue = min(work.cursorsDue, cursorDue(client))
        return change.sharedFrame ?? hub.changeFrame(body: change.bytes, seq: change.pts, cursor: nil)
    }

    /// Queues each owed `cursor` frame whose socket had none for `cursorSeconds`: the first
    /// after a quiet spell goes at the end of its pass, and one covers a burst's changes.
    func sendOwedCursors(now: UInt64) {
        guard now >= work.cursorsDue else { return }
        var due = UInt64.max
        for id in work.cursorsOwed {
            guard let client = clients[id], !client.dead, !client.closing, let logs = client.logs else {
                work.cursorsOwed.remove(id)
                continue
            }
            guard now >= cursorDue(client) else {
                due = min(due, cursorDue(client))
                continue
            }
            client.lastCursor = now
            enqueue(hub.cursorFrame(logs), to: client)
            work.cursorsOwed.remove(id)
        }
        work.cursorsDue = due
    }

    /// When `client` may have its next cursor frame: at once after its first, else
    /// `cursorSeconds` after its last.
    func cursorDue(_ client: Client) -> UInt64 {
        client.lastCursor == 0 ? 0 : client.lastCursor + UInt64(hub.configuration.cursorSeconds * 1e9)
    }

    /// Sends what each socket with new output takes now; one left with output is watched for
    /// room to write, one that drained no longer.
    func flushUnflushed() {
        let ids = work.unflushed
        work.unflushed = []
        for id in ids {
            guard let client = clients[id], !client.dead else { continue }
            flush(client)
            if client.closing && client.output.isEmpty { client.dead = true }
            let waiting = !client.dead && !client.output.isEmpty
            if waiting != client.watchingWrites {
                client.watchingWrites = waiting
                poller.change(client.socket.fd, key: UInt64(client.id), writes: waiting)
            }
        }
    }

    mutating func handle(_ command: RealtimeHub.Command) {
        switch command {
        case .register(let socket, let session, let id):
            // One user may hold only so many sockets (one token opening a thousand made chatd
            // unreachable): the next is told why and closed, before it counts anywhere.
            guard !revoked.contains(session.tokenHash) else {
                return refuse(socket, of: session, "token revoked")
            }
            guard clients.count < hub.configuration.maxSockets else {
                return refuse(socket, of: session, "this node is at its realtime sockets' limit", code: .tryAgainLater)
            }
            guard
                (byUser[session.uid] ?? []).count(where: { !$0.closing && !$0.dead })
                    < hub.configuration.maxSocketsPerUser
            else {
                return refuse(socket, of: session, "too many realtime sockets for this user")
            }
            _ = fcntl(socket.fd, F_SETFL, fcntl(socket.fd, F_GETFL) | O_NONBLOCK)
            let client = Client(
                socket: socket, session: session, id: id, now: hub.monotonicNow(),
                maxMessageSize: hub.configuration.maxMessageSize, work: work)
            clients[id] = client
            byUser[session.uid, default: []].append(client)
            greeting[id] = client
            if !poller.watch(socket.fd, key: UInt64(id)) { client.dead = true }
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
            for client in byUser[uid] ?? [] { enqueue(frame, to: client) }
        case .groupTyping(let guid, let sender, let frame):
            deliverGroupTyping(frame, guid: guid, sender: sender)
        case .revoke(let hash):
            if revoked.count >= Self.maxRevokedKept { revoked.removeAll() }
            revoked.insert(hash)
            for client in clients.values where client.session.tokenHash == hash {
                close(client, .policyViolation, "token revoked")
            }
        case .hello(let id, let logs):
            guard let client = clients[id], !client.dead, !client.closing else { return }
            greeting[id] = nil
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
            noteHeld(client)
        case .abandon(let id):
            if let client = clients[id] { close(client, .internalError, "cannot read your position; reconnect") }
        case .deliver(let body, let positions, let group):
            deliver(body, at: positions, group: group)
        case .stop:
            running = false
        }
    }

    /// Closes a socket that may not register (`code`, `reason`), before it counts anywhere.
    func refuse(
        _ socket: UpgradedSocket, of session: RealtimeSession, _ reason: String, code: CloseCode = .policyViolation
    ) {
        let refusal = Frame.close(code, reason: reason).encoded()
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
                var delivery = Delivery(pts: group.pts, body: body, bytes: bytes, group: group)
                delivery.sharedFrame = hub.changeFrame(body: bytes, seq: group.pts, cursor: nil)
                // A socket not yet past its hello follows nothing yet: it keeps the change.
                for client in greeting.values where !client.dead && !client.closing {
                    client.beforeHello.append(delivery)
                    if client.beforeHello.count > ChangeOrder.maxHeld {
                        close(client, Self.missedChanges, "missed changes; resume from your cursor")
                    }
                }
                for client in followers.of(group.conversationId)
                where !client.dead && !client.closing && client.groupOrders[group.conversationId] != nil {
                    let ready = client.groupOrders[group.conversationId]!.receive(delivery, now: now)
                    send(ready, of: group.conversationId, to: client)
                    if let order = client.groupOrders[group.conversationId], order.holds {
                        work.holding.insert(client.id)
                        if order.overflowed {
                            close(client, Self.missedChanges, "missed changes; resume from your cursor")
                        }
                    }
                }
            }
        }
        for (uid, pts) in wanted {
            for client in byUser[uid] ?? [] where !client.dead && !client.closing {
                send(
                    client.order.receive(Delivery(pts: pts, body: body, bytes: bytes, group: group), now: now),
                    to: client)
                if client.order.holds { work.holding.insert(client.id) }
                if client.order.overflowed {
                    close(client, Self.missedChanges, "missed changes; resume from your cursor")
                }
            }
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
                enqueue(frame(change, for: client, after: logs), to: client)
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
                enqueue(frame(change, for: client, after: logs), to: client)
                var ready: [Delivery] = []
                for rest in changes[(index + 1)...] {
                    ready += client.groupOrders[group]?.receive(rest, now: hub.monotonicNow()) ?? []
                }
                return send(ready, of: group, to: client)
            }
            logs.groups[group] = change.pts
            client.logs = logs
            enqueue(frame(change, for: client, after: logs), to: client)
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
        var due: [Client] = []
        for id in work.holding {
            guard let client = clients[id], !client.dead, !client.closing else {
                work.holding.remove(id)
                continue
            }
            guard client.holdsAny else {
                work.holding.remove(id)
                continue
            }
            if client.order.position != nil, late(client.order) || client.groupOrders.values.contains(where: late) {
                due.append(client)
            }
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
        read(
            clients.values.filter { !$0.dead && !$0.closing && $0.order.position != nil }, headsFirst: true
        ) { _ in true }
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
            guard let client = clients[page.id], !client.dead, !client.closing else { continue }
            guard let changes = page.changes, !page.groups.values.contains(where: { $0 == nil }) else {
                close(client, Self.missedChanges, "missed changes; resume from your cursor")
                continue
            }
            send(client.order.fill(changes, now: now), to: client)
            for (group, changes) in page.groups {
                guard let changes, let ready = client.groupOrders[group]?.fill(changes, now: now) else { continue }
                send(ready, of: group, to: client)
            }
            noteHeld(client)
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

    /// Whether the socket holds changes waiting for a gap: the gap fill looks at it.
    func noteHeld(_ client: Client) {
        if client.holdsAny { work.holding.insert(client.id) }
    }

    mutating func sweep() {
        guard !work.ended.isEmpty else { return }
        let ended = work.ended
        work.ended = []
        for id in ended {
            guard let client = clients.removeValue(forKey: id) else { continue }
            greeting[id] = nil
            byUser[client.uid]?.removeAll { $0 === client }
            if byUser[client.uid]?.isEmpty == true { byUser[client.uid] = nil }
            work.queued -= client.output.count  // what it never sent (none after `drop`)
            poller.forget(client.socket.fd)
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

/// What the loop's non-mutating helpers keep (the loop's thread only): the sockets a pass must
/// come back to (given output since their last flush, ended, holding changes for a gap, owed a
/// cursor frame) and the bytes all sockets have queued.
final class LoopWork {
    /// Unsent bytes over all sockets (each counts what it queued, shared frames included).
    var queued = 0
    var unflushed: Set<Int> = []
    var ended: [Int] = []
    var holding: Set<Int> = []
    /// Sockets owed a `cursor` frame (their changes went without one).
    var cursorsOwed: Set<Int> = []
    /// No owed cursor frame is due before this (monotonic nanoseconds): passes before it do
    /// not look at `cursorsOwed`.
    var cursorsDue: UInt64 = 0
    /// The bytes of one system call's send, reused (`OutputQueue.send`).
    var scratch: [UInt8] = []
    /// What one system call's receive reads into, reused (`receive`).
    var received = [UInt8](repeating: 0, count: 64 << 10)
}
