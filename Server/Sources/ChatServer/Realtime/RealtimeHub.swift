import Foundation
import Glibc
import OfflineChatLocking
import OfflineChatProtocol
import OfflineChatWebSocket
import Synchronization

/// The realtime WebSocket endpoint: one event-loop thread (poll) serves every socket.
///
/// Changes arrive through `publish` once committed, each with every reader's position. A new
/// socket is registered first and its user's position read after, which its `hello` carries:
/// a change committed before that read is in the cursor, one committed after has a later
/// position and reaches the socket. Each socket sends positions in order (`ChangeOrder`): a
/// repeat is dropped, an early one waits for the gap to close, and a gap still open after
/// `gapWaitSeconds` is filled from the inbox. A lost change costs latency, never correctness.
/// A socket whose unsent backlog exceeds `maxBufferedBytes` is disconnected (slow consumer).
public final class RealtimeHub: Sendable {
    public struct Configuration: Sendable {
        /// Unsent bytes a socket may accumulate before it is dropped (its client resumes from
        /// its cursor).
        public var maxBufferedBytes = 1 << 20
        /// Unsent bytes all sockets together may hold; past it the longest backlog is dropped.
        public var maxTotalBufferedBytes = 64 << 20
        /// Seconds between server pings; a socket silent for 2.5 intervals is dropped.
        public var heartbeatSeconds = 20.0
        /// Largest message a client may send.
        public var maxMessageSize = 64 << 10
        /// Realtime sockets one user may hold at once (one per device or tab is the norm).
        public var maxSocketsPerUser = 8
        /// Realtime sockets this node holds at most (`--max-connections`): the HTTP library
        /// lets go of a plain socket once it is upgraded, so they are counted here.
        public var maxSockets = 1_000
        /// The least time between two `cursor` frames to one socket (`cursorFrames=true`).
        public var cursorSeconds = 1.0
        /// How long a socket waits for a missing position before reading it from the inbox.
        public var gapWaitSeconds = 0.25
        /// With a bus (several nodes): how often every socket's position is checked against
        /// its user's head, the backstop for a lost bus message with nothing after it, and this
        /// node's presence is shared with the others.
        public var catchUpSeconds = 5.0
        /// How often every socket's token is checked against the database (a revocation made
        /// elsewhere, or lost on the bus, closes its sockets within this time).
        public var tokenCheckSeconds = 5.0
        /// This node's name in the shared presence (default the machine's host name).
        public var nodeID = ServerConfiguration.hostName()
        public init() {}
    }

    enum Command {
        /// A new socket; it sends nothing until its `hello`.
        case register(UpgradedSocket, session: RealtimeSession, id: Int)
        /// The user's positions (their log's and their groups') read after the socket was registered.
        case hello(id: Int, logs: LogPositions)
        /// The user's position could not be read: close the socket.
        case abandon(id: Int)
        /// A committed change (stored without `seq`), each reader's position for it, and its
        /// place in its group's log when it is a group's.
        case deliver(body: String, positions: [Position], group: GroupPlace?)
        /// Close the sockets opened with this token (it was revoked).
        case revoke(tokenHash: String)
        /// A block between two users began (true) or ended (false): typing between them is dropped.
        case block(BlockPayload, Bool)
        /// A user came into (true) or left (false) a group: group typing reaches members only.
        case membership(guid: String, uid: String, Bool)
        /// A group was deleted.
        case dropGroup(String)
        /// Bring every socket up to its user's head from the inbox (the bus reconnected).
        case catchUp
        /// Inbox pages read for sockets (`readMissing`); nil for one too far behind or unread.
        case filled([FilledRead])
        /// A typing frame from another node for `uid`'s sockets here.
        case typing(uid: String, frame: [UInt8])
        /// A group typing frame from another node for the group's members here.
        case groupTyping(guid: String, sender: String, frame: [UInt8])
        case stop
    }

    let configuration: Configuration
    let store: Store
    /// The bus to the other nodes; nil on a single node.
    let bus: NatsBus?
    let monotonicNow: @Sendable () -> UInt64
    /// Where committed changes and the bus's lag are counted (`GET /metrics`).
    let metrics: Metrics
    private let commands = CommandQueue()
    private let wake: (read: Int32, write: Int32)
    private let stopped = Atomic(false)
    private let started = Atomic(false)
    private let finished = DispatchSemaphore(value: 0)
    private let nextSocketID = Atomic<Int>(0)
    /// A presence write is under way (`sharePresence`).
    private let sharingPresence = Atomic(false)
    /// A periodic token check is under way (`checkTokens`).
    private let checkingTokens = Atomic(false)
    /// Open realtime sockets, for health and tests.
    let connectionCount = Atomic<Int>(0)
    /// Users with an open socket.
    public let presence = Presence()

    init(
        store: Store, configuration: Configuration, bus: NatsBus? = nil, metrics: Metrics = Metrics(),
        monotonicNow: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
    ) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw HTTPError(500, .internalError, "cannot create the realtime wake pipe") }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        self.wake = (fds[0], fds[1])
        self.store = store
        self.configuration = configuration
        self.monotonicNow = monotonicNow
        self.bus = bus
        self.metrics = metrics
        store.onCommit { [weak self] changes in self?.publish(changes) }
        bus?.setHandler { [weak self] message in self?.received(message) }
    }

    /// Starts the event loop thread.
    public func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            var loop = RealtimeLoop(hub: self)
            loop.run()
            finished.signal()
        }
        thread.name = "chatd-realtime"
        thread.start()
    }

    /// Closes every socket with 1001 (going away) and ends the loop. Later commands are
    /// dropped (and sockets handed over later are closed at once).
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        send(.stop)
        commands.close()
        if started.load(ordering: .acquiring) { finished.wait() }
        // Sockets handed over after the loop's last look are closed here, not leaked.
        for case .register(let socket, _, _) in commands.takeAll() { socket.close() }
    }

    deinit {
        Glibc.close(wake.read)
        Glibc.close(wake.write)
    }

    func send(_ commands: [Command]) {
        guard !commands.isEmpty else { return }
        switch self.commands.append(commands) {
        case .refused: for case .register(let socket, _, _) in commands { socket.close() }
        case .behindOthers: break  // the loop was woken for those and takes these with them
        case .first:
            // A writer publishes under its lock: one wake per burst, not one per commit,
            // spares it a system call and the switch to the loop that may follow.
            var byte: UInt8 = 1
            _ = Glibc.write(wake.write, &byte, 1)
        }
    }

    func send(_ command: Command) { send([command]) }

    func takeCommands() -> [Command] {
        var drain = [UInt8](repeating: 0, count: 256)
        while Glibc.read(wake.read, &drain, drain.count) > 0 {}
        return commands.takeAll()
    }

    var wakeDescriptor: Int32 { wake.read }

    /// Queues each change for the sockets of its audience (here and, over the bus, elsewhere).
    func publish(_ changes: [PublishedChange]) {
        metrics.committed(kinds: changes.map(\.change.kind.rawValue))
        bus?.publish(changes)
        send(
            changes.flatMap { published in
                [
                    Command.deliver(
                        body: published.body, positions: published.positions,
                        group: published.groupLog.map {
                            GroupPlace(conversationId: $0, pts: published.groupPosition ?? 0, span: published.span)
                        })
                ]
                    + Self.controlCommands(published.change)
            })
    }

    /// What another node sent.
    func received(_ message: BusMessage) {
        switch message {
        case .change(let position, let body, let group, let publishedAt):
            metrics.busReceived(lag: Double(NatsBus.wallClock() - publishedAt) / 1000)
            var commands = [Command.deliver(body: body, positions: position.map { [$0] } ?? [], group: group)]
            // Blocks and memberships keep the typing filters here current too.
            if Self.controlKinds.contains(where: body.contains),
                let change = try? JSONDecoder().decode(
                    ChangePayload.self,
                    from: Data(StoredChange.json(body: body, position: position?.pts ?? group?.pts ?? 0).utf8))
            {
                commands += Self.controlCommands(change)
            }
            send(commands)
        case .typing(let uid, let frame): send(.typing(uid: uid, frame: frame))
        case .groupTyping(let guid, let sender, let frame): send(.groupTyping(guid: guid, sender: sender, frame: frame))
        case .revoke(let hash):
            // Forgetting costs the next request a database read, nothing more; closing the
            // sockets waits for the database to confirm the revocation.
            store.sessions.forget(hash)  // before the sockets close: a client that saw them close is refused
            closeLapsed([hash])
        case .refused: metrics.busRefused()
        case .reconnected:
            store.sessions.setTrusted(true)
            send(.catchUp)
        case .disconnected: store.sessions.setTrusted(false)  // a revocation could pass unheard
        }
    }

    static let controlKinds = [ChangeKind.userBlocked, .userUnblocked, .groupCreated, .groupDeleted, .groupMember]
        .map { #""kind":""# + $0.rawValue + #"""# }

    /// What a change means for the loop's copies of blocks and group membership.
    static func controlCommands(_ change: ChangePayload) -> [Command] {
        var commands = membershipCommands(change)
        if let block = change.block { commands.append(.block(block, change.kind == .userBlocked)) }
        return commands
    }

    /// What a change means for the realtime loop's copy of group membership.
    static func membershipCommands(_ change: ChangePayload) -> [Command] {
        switch change.kind {
        case .groupCreated: return change.group.map { [.membership(guid: $0.guid, uid: $0.owner, true)] } ?? []
        case .groupDeleted: return change.group.map { [.dropGroup($0.guid)] } ?? []
        case .groupMember:
            guard let action = change.message?.action else { return [] }
            switch action.action {
            case .joined, .added: return [.membership(guid: action.guid, uid: action.target, true)]
            case .left, .kicked, .banned: return [.membership(guid: action.guid, uid: action.target, false)]
            case .unbanned, .scopeChanged, .ownershipTransferred: return []
            }
        default: return []
        }
    }

    /// `{"change": …, "cursor": …, "type": "change"}` around the stored change with the
    /// reader's position (keys sorted); the cursor resumes the changelog right after it. In
    /// three parts: the header and `{"change":`, the stored change's bytes (`body`, shared by
    /// every reader's frame: only the position and cursor differ), then the reader's tail. A
    /// nil `cursor` (a socket that reads `cursor` frames) leaves it out.
    func changeFrame(body: [UInt8], seq: Int64, cursor: String?) -> [[UInt8]] {
        let head = Self.changeHead
        let tail = Array(
            (StoredChange.ending(seq) + (cursor.map { #","cursor":""# + $0 + #"""# } ?? "") + #","type":"change"}"#)
                .utf8)
        return [Frame.header(opcode: .text, payloadLength: head.count + body.count + tail.count) + head, body, tail]
    }

    static let changeHead = Array(#"{"change":"#.utf8)

    /// A `cursor` frame.
    func cursorFrame(_ logs: LogPositions) -> [UInt8] {
        Self.frame(RealtimeEnvelope(type: .cursor, cursor: store.cursor(logs))) ?? []
    }

    static func frame(_ envelope: RealtimeEnvelope) -> [UInt8]? {
        guard let json = try? CompactJSONEncoder().encode(envelope) else { return nil }
        return Frame(opcode: .text, payload: json).encoded()
    }

    /// Shares this node's socket counts and learns who is online on the other live nodes (a
    /// node that stopped beating for three catch-up periods no longer counts). Runs off the
    /// realtime thread (a slow database must not hold up frames), one at a time.
    func sharePresence() {
        guard !sharingPresence.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DispatchQueue.global().async { [self] in
            defer { sharingPresence.store(false, ordering: .releasing) }
            let counts = presence.takeChanged()
            let timeout = Int64(configuration.catchUpSeconds * 3 * 1000)
            do {
                presence.setElsewhere(
                    try store.syncPresence(node: configuration.nodeID, counts: counts, timeout: timeout))
            } catch {
                presence.restore(counts)
            }
        }
    }

    /// Reads each socket's inbox after its position, and the logs of the groups it names after
    /// theirs, off the realtime thread (a slow database must not hold up frames), and hands the
    /// pages to the loop (`.filled`). With `headsFirst`, reads the heads first and only what
    /// is behind them (the periodic catch-up); when even that read fails, nothing is filled
    /// this time.
    func readMissing(_ sockets: [MissingRead], headsFirst: Bool) {
        DispatchQueue.global().async { [self] in
            var behind = sockets
            if headsFirst {
                guard let heads = try? store.positions(of: Array(Set(sockets.map(\.uid)))),
                    let groupHeads = try? store.groupHeads(Array(Set(sockets.flatMap(\.groups.keys))))
                else {
                    return send(.filled([]))
                }
                behind = sockets.compactMap { socket in
                    var socket = socket
                    socket.groups = socket.groups.filter { groupHeads[$0.key, default: 0] > $0.value }
                    return heads[socket.uid, default: 0] > socket.position || !socket.groups.isEmpty ? socket : nil
                }
            }
            send(
                .filled(
                    behind.map { socket in
                        let page = try? store.changes(
                            for: socket.uid, after: socket.position, limit: ChangeOrder.maxHeld)
                        return FilledRead(
                            id: socket.id, changes: page.flatMap { $0.hasMore ? nil : $0.changes },
                            groups: Dictionary(
                                uniqueKeysWithValues: socket.groups.map { group, position in
                                    let page = try? store.groupChanges(
                                        of: group, for: socket.uid, after: position, limit: ChangeOrder.maxHeld)
                                    return (group, page.flatMap { $0.hasMore ? nil : $0.changes })
                                }))
                    }))
        }
    }

    /// Closes the sockets of whichever of `hashes` the database says no longer open a session,
    /// read off the realtime thread. A periodic check (`periodic`) runs one at a time.
    func closeLapsed(_ hashes: Set<String>, periodic: Bool = false) {
        guard !hashes.isEmpty else { return }
        if periodic { guard !checkingTokens.exchange(true, ordering: .acquiringAndReleasing) else { return } }
        DispatchQueue.global().async { [self] in
            defer { if periodic { checkingTokens.store(false, ordering: .releasing) } }
            guard let lapsed = try? store.lapsedTokens(among: hashes) else { return }
            send(lapsed.map { Command.revoke(tokenHash: $0) })
        }
    }

    /// Closes the realtime sockets of a revoked token (1008), on every node.
    func revoke(tokenHash: String) {
        send(.revoke(tokenHash: tokenHash))
        bus?.publishRevocation(tokenHash: tokenHash)
    }

    /// Answers a WebSocket opening handshake, or explains what is wrong with it.
    func upgrade(_ request: HTTPRequest, session: RealtimeSession) throws -> HTTPResponse {
        guard request.header("upgrade")?.lowercased().contains("websocket") == true,
            request.header("connection")?.lowercased().contains("upgrade") == true
        else {
            throw HTTPError(400, .invalidParameter, "this endpoint speaks WebSocket: send Upgrade: websocket")
        }
        guard request.header("sec-websocket-version") == "13" else {
            var response = HTTPResponse.error(HTTPError(426, .invalidParameter, "Sec-WebSocket-Version must be 13"))
            response.headers.append(("Sec-WebSocket-Version", "13"))
            return response
        }
        guard let key = request.header("sec-websocket-key"), Handshake.isValidKey(key) else {
            throw HTTPError(400, .invalidParameter, "Sec-WebSocket-Key must be 16 random bytes in base64")
        }
        guard !stopped.load(ordering: .acquiring) else { throw HTTPError(503, .unavailable, "chatd is shutting down") }
        return HTTPResponse(
            status: 101,
            headers: [("Upgrade", "websocket"), ("Sec-WebSocket-Accept", Handshake.acceptValue(forKey: key))],
            upgrade: { [self] socket in attach(socket, session: session) })
    }

    /// Registers a socket, then reads its user's position for the hello.
    func attach(_ socket: UpgradedSocket, session: RealtimeSession) {
        let id = nextSocketID.add(1, ordering: .relaxed).newValue
        bus?.retain(session.uid)  // subscribed before the position is read: nothing after it is missed
        // With a bus, group changes made through other nodes before this user had a socket here
        // never reached this node's copy of the groups: the user's own come from the database
        // (those after the subscription arrive with their changes). Group typing needs them.
        if bus != nil, let guids = try? store.groups(of: session.uid) {
            send(guids.map { Command.membership(guid: $0, uid: session.uid, true) })
        }
        send(.register(socket, session: session, id: id))
        guard let logs = try? store.logPositions(of: session.uid) else { return send(.abandon(id: id)) }
        send(.hello(id: id, logs: logs))
    }

    func helloFrame(uid: String, logs: LogPositions) -> [UInt8] {
        Self.frame(RealtimeEnvelope(type: .hello, uid: uid, cursor: store.cursor(logs))) ?? []
    }
}

/// Who a realtime socket belongs to and until when its token is valid.
struct RealtimeSession: Sendable {
    let uid: String
    /// `Store.tokenHash` of the token it was opened with (revocation finds it by that).
    let tokenHash: String
    /// Epoch seconds; the socket is closed (1008) once the server clock passes it.
    let expiresAt: Int64
    /// Opened with `cursorFrames=true`: its change frames carry no cursor, coalesced `cursor`
    /// frames do.
    var cursorFrames = false
}

/// The hub's inbox: commands from request threads to the loop thread. Its lock is held for an
/// append or a swap.
final class CommandQueue: Sendable {
    private let state = Locked((items: [RealtimeHub.Command](), closed: false))

    /// Where `append` put commands.
    enum Queued {
        /// Nowhere: the hub has stopped.
        case refused
        /// Into an empty queue: the loop needs waking.
        case first
        /// Behind commands the loop has not taken yet (it was woken for them).
        case behindOthers
    }

    /// Queues `commands`.
    func append(_ commands: [RealtimeHub.Command]) -> Queued {
        state.withLock { state in
            guard !state.closed else { return .refused }
            defer { state.items += commands }
            return state.items.isEmpty ? .first : .behindOthers
        }
    }

    /// Refuses commands from now on (those queued stay for `takeAll()`).
    func close() { state.withLock { $0.closed = true } }

    func takeAll() -> [RealtimeHub.Command] {
        state.withLock { state in
            defer { state.items = [] }
            return state.items
        }
    }
}

/// What a socket is missing (`RealtimeHub.readMissing`): its user log after `position`, and
/// each group's log it names after its position there.
struct MissingRead: Sendable {
    let id: Int
    let uid: String
    let position: Int64
    var groups: [String: Int64]
}

/// What `readMissing` read for a socket: nil for a log too far behind or unread.
struct FilledRead: Sendable {
    let id: Int
    let changes: [Delivery]?
    let groups: [String: [Delivery]?]
}
