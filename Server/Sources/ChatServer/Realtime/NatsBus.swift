import CNats
import Foundation
import OfflineChatLocking

/// The realtime bus between chatd nodes, on NATS core. Each committed change of a user's own
/// log is published once per reader to `chatd.u.<uid>` with the reader's position, and so are
/// typing frames; a group's change is published once to `chatd.g.<group conversation>` with
/// its group position. A node subscribes only for the users with a socket on it and the groups
/// those sockets follow, and does not hear its own publications (it delivered those itself). Token revocations go to every node
/// (`chatd.all`). Every frame is sealed (`BusSeal`): one that does not open under the cluster's
/// secret is dropped and counted, whoever managed to publish it. NATS core is at most once: a message lost in a restart or a reconnect is a gap in
/// a socket's positions, which the socket fills from the inbox (`ChangeOrder`), and every
/// reconnect is followed by a catch-up of every connected user.
final class NatsBus: Sendable {
    private let state = Locked(State())
    /// Seals what this node publishes and opens what it hears (`BusSeal`).
    private let seal: BusSeal
    static let broadcastSubject = "chatd.all"
    /// What NATS's callbacks are given to find this bus by (`LiveBuses`), never a pointer to it.
    private let number = LiveBuses.reserve()
    private var context: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: number)! }

    private struct State {
        var connection: OpaquePointer?
        var subscriptions: [String: (subscription: OpaquePointer?, sockets: Int)] = [:]
        /// A change for one of this node's users from another node; the connection came back
        /// after a loss (messages may have been missed). Set once by the hub.
        var handler: (@Sendable (BusMessage) -> Void)?
        /// The subscription to `chatd.all`.
        var broadcast: OpaquePointer?
    }

    /// Connects to the bus `settings` describe, with their credentials and TLS, reconnecting
    /// for as long as it takes. Every frame is sealed and opened with `seal`.
    init(settings: BusSettings, seal: BusSeal) throws {
        self.seal = seal
        var options: OpaquePointer?
        try Self.check(natsOptions_Create(&options), "options")
        defer { natsOptions_Destroy(options) }
        try Self.check(natsOptions_SetURL(options, settings.url), "url \(settings.redactedURL)")
        try Self.authenticate(options, settings)
        try Self.check(natsOptions_SetNoEcho(options, true), "no echo")
        try Self.check(natsOptions_SetMaxReconnect(options, -1), "reconnects")
        try Self.check(natsOptions_SetReconnectWait(options, 250), "reconnect wait")
        LiveBuses.add(self, as: number)
        try Self.check(natsOptions_SetReconnectedCB(options, busReconnected, context), "reconnected callback")
        try Self.check(natsOptions_SetDisconnectedCB(options, busDisconnected, context), "disconnected callback")
        var connection: OpaquePointer?
        try Self.check(natsConnection_Connect(&connection, options), "connect to \(settings.redactedURL)")
        state.withLock { $0.connection = connection }
        var broadcast: OpaquePointer?
        defer { state.withLock { $0.broadcast = broadcast } }
        try Self.check(
            natsConnection_Subscribe(&broadcast, connection, Self.broadcastSubject, busMessage, context), "subscribe")
    }

    /// Credentials and TLS: whatever `settings` name (nats-server refuses what it was not told to take).
    private static func authenticate(_ options: OpaquePointer?, _ settings: BusSettings) throws {
        if let user = settings.user {
            try check(natsOptions_SetUserInfo(options, user, try settings.resolvedPassword()), "user")
        }
        if let token = try settings.resolvedToken() { try check(natsOptions_SetToken(options, token), "token") }
        if let file = settings.credentialsFile {
            try check(natsOptions_SetUserCredentialsFromFiles(options, file, nil), "credentials file \(file)")
        }
        guard settings.usesTLS else { return }
        try check(natsOptions_SetSecure(options, true), "TLS")
        if let file = settings.caFile {
            try check(natsOptions_LoadCATrustedCertificates(options, file), "CA file \(file)")
        }
        if let certificate = settings.certificateFile, let key = settings.keyFile {
            try check(natsOptions_LoadCertificatesChain(options, certificate, key), "client certificate \(certificate)")
        }
    }

    deinit { close() }

    /// Who hears what arrives (the hub); set once.
    func setHandler(_ handler: @escaping @Sendable (BusMessage) -> Void) { state.withLock { $0.handler = handler } }

    func deliver(_ message: BusMessage) { state.withLock { $0.handler }?(message) }

    /// A frame as it came off the bus: opened and read, or reported as `.refused` (not sealed
    /// under this cluster's secret, or not a frame chatd writes).
    func deliver(sealed bytes: UnsafeBufferPointer<UInt8>) {
        guard let opened = seal.open(bytes), let message = opened.withUnsafeBufferPointer(BusMessage.init) else {
            return deliver(.refused)
        }
        deliver(message)
    }

    /// Closes the connection. No callback reaches the bus once this has begun, and none that
    /// began before is still running when it returns.
    func close() {
        LiveBuses.remove(number)
        let handle = state.withLock { state in
            defer {
                state.connection = nil
                state.subscriptions = [:]
                if let broadcast = state.broadcast { natsSubscription_Destroy(broadcast) }
                state.broadcast = nil
            }
            return state.connection
        }
        guard let handle else { return }
        natsConnection_Close(handle)
        natsConnection_Destroy(handle)
    }

    var isConnected: Bool {
        state.withLock { $0.connection.map { natsConnection_Status($0) == NATS_CONN_STATUS_CONNECTED } ?? false }
    }

    /// `chatd.u.<uid>`: a uid's dots are escaped (a dot separates subject tokens).
    static func subject(_ uid: String) -> String { "chatd.u." + uid.replacingOccurrences(of: ".", with: "%2E") }

    /// `chatd.g.<group conversation>`, escaped the same way.
    static func groupSubject(_ conversationId: String) -> String {
        "chatd.g." + conversationId.replacingOccurrences(of: ".", with: "%2E")
    }

    /// Each reader's position and the change, to the reader's subject; a group's change once,
    /// to its group's subject.
    func publish(_ changes: [PublishedChange]) {
        let now = Self.wallClock()
        send(
            changes.flatMap { change in
                let group = change.groupLog.map {
                    GroupPlace(conversationId: $0, pts: change.groupPosition ?? 0, span: change.span)
                }
                let toGroup = group.map {
                    [
                        (
                            Self.groupSubject($0.conversationId),
                            BusMessage.change(nil, body: change.body, group: $0, publishedAt: now).encoded
                        )
                    ]
                }
                return (toGroup ?? [])
                    + change.positions.map {
                        (
                            Self.subject($0.uid),
                            BusMessage.change($0, body: change.body, group: group, publishedAt: now).encoded
                        )
                    }
            })
    }

    /// Epoch milliseconds: a change's publish time, which the receiving node's bus lag is
    /// measured from (the nodes' clocks are assumed in step, as NTP keeps them).
    static func wallClock() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// A typing frame to the sockets of `uid` on the other nodes.
    func publishTyping(_ frame: [UInt8], to uid: String) {
        send([(Self.subject(uid), BusMessage.typing(uid: uid, frame: frame).encoded)])
    }

    /// A group typing frame, once, to every other node (each hands it to the members it holds).
    func publishGroupTyping(_ frame: [UInt8], guid: String, sender: String) {
        send([(Self.broadcastSubject, BusMessage.groupTyping(guid: guid, sender: sender, frame: frame).encoded)])
    }

    /// A revoked token: every node closes its sockets.
    func publishRevocation(tokenHash: String) {
        send([(Self.broadcastSubject, BusMessage.revoke(tokenHash: tokenHash).encoded)])
    }

    private func send(_ messages: [(subject: String, payload: [UInt8])]) {
        state.withLock { state in
            guard let connection = state.connection else { return }
            for message in messages {
                let sealed = seal.seal(message.payload)
                _ = natsConnection_Publish(connection, message.subject, sealed, Int32(sealed.count))
            }
        }
    }

    /// A socket of `uid` opens on this node: subscribe for the first one, and wait until the
    /// server has the subscription (the caller reads the user's positions next).
    func retain(_ uid: String) { retain(subject: Self.subject(uid), flush: true) }

    /// A socket of `uid` closed: unsubscribe after the last one.
    func release(_ uid: String) { release(subject: Self.subject(uid)) }

    /// The first socket here follows a group: subscribe. The realtime thread asks this, so it
    /// does not wait for the server: a change published before the subscription took is a gap
    /// the socket fills (or the periodic catch-up does).
    func retainGroup(_ conversationId: String) { retain(subject: Self.groupSubject(conversationId), flush: false) }

    /// The last socket here stopped following a group: unsubscribe.
    func releaseGroup(_ conversationId: String) { release(subject: Self.groupSubject(conversationId)) }

    private func retain(subject: String, flush: Bool) {
        state.withLock { state in
            if var entry = state.subscriptions[subject] {
                entry.sockets += 1
                state.subscriptions[subject] = entry
                return
            }
            var subscription: OpaquePointer?
            if let connection = state.connection {
                _ = natsConnection_Subscribe(&subscription, connection, subject, busMessage, context)
                if flush { _ = natsConnection_Flush(connection) }
            }
            state.subscriptions[subject] = (subscription, 1)
        }
    }

    private func release(subject: String) {
        state.withLock { state in
            guard var entry = state.subscriptions[subject] else { return }
            entry.sockets -= 1
            guard entry.sockets == 0 else {
                state.subscriptions[subject] = entry
                return
            }
            state.subscriptions[subject] = nil
            if let subscription = entry.subscription {
                _ = natsSubscription_Unsubscribe(subscription)
                natsSubscription_Destroy(subscription)
            }
        }
    }

    static func check(_ status: natsStatus, _ what: String) throws {
        guard status == NATS_OK else {
            throw StoreError.unavailable("NATS: \(what): \(String(cString: natsStatus_GetText(status)))")
        }
    }
}

/// The buses NATS's callbacks may reach, by the number each gave NATS as their context. NATS
/// runs a connection's disconnect on a thread of its own, posted while the connection closes,
/// so it may come after `close()` has returned and the bus is gone (chatd crashed at exit on
/// it). A callback reaches its bus only through here, delivering under the lock `close()`
/// takes to remove the bus: after that a callback finds nothing, and none is still running.
private enum LiveBuses {
    private struct State {
        var next = 1
        var buses: [Int: Unmanaged<NatsBus>] = [:]
    }
    private static let state = Locked(State())

    /// A number for a bus about to be made (never 0: it becomes a non-null context).
    static func reserve() -> Int {
        state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
    }

    static func add(_ bus: NatsBus, as number: Int) {
        state.withLock { $0.buses[number] = Unmanaged.passUnretained(bus) }
    }

    static func remove(_ number: Int) { state.withLock { _ = $0.buses.removeValue(forKey: number) } }

    /// Hands `message` to the bus `context` stands for, if it is still open.
    static func deliver(_ message: BusMessage, to context: UnsafeMutableRawPointer?) {
        guard let context else { return }
        state.withLock { $0.buses[Int(bitPattern: context)]?.takeUnretainedValue().deliver(message) }
    }

    /// Hands a frame as it came off the bus to the bus `context` stands for, if it is still open.
    static func deliver(sealed bytes: UnsafeBufferPointer<UInt8>, to context: UnsafeMutableRawPointer?) {
        guard let context else { return }
        state.withLock { $0.buses[Int(bitPattern: context)]?.takeUnretainedValue().deliver(sealed: bytes) }
    }
}

/// NATS calls these on its own threads (C callbacks live outside main.swift).
private let busMessage:
    @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
        _, _, message, context in
        guard let message else { return }
        defer { natsMsg_Destroy(message) }
        guard let data = natsMsg_GetData(message) else { return }
        let bytes = UnsafeBufferPointer(
            start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self),
            count: Int(natsMsg_GetDataLength(message)))
        LiveBuses.deliver(sealed: bytes, to: context)
    }

private let busReconnected: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, context in
    LiveBuses.deliver(.reconnected, to: context)
}

private let busDisconnected: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, context in
    LiveBuses.deliver(.disconnected, to: context)
}

/// What travels on the bus (sealed by `BusSeal`), one line of kind and fields, then the payload:
/// `c\n<pts>\n<uid>\n<published at, epoch ms>\n<stored change>`, or for a group's change
/// `d\n<pts>\n<uid>\n<published at>\n<group conversation>\n<group pts>\n<span>\n<stored change>`
/// (span: empty, `o:<uid>`, `c:<uid>` or `a`: `SpanChange`; pts and uid empty on the group's
/// subject, where no reader is named), `t\n<uid>\n<typing frame>`,
/// `g\n<guid>\n<sender>\n<typing frame>`, `r\n<token hash>`.
enum BusMessage: Equatable, Sendable {
    /// A change for one reader (`Position`), or a group's for its followers (no reader).
    case change(Position?, body: String, group: GroupPlace?, publishedAt: Int64)
    case typing(uid: String, frame: [UInt8])
    case groupTyping(guid: String, sender: String, frame: [UInt8])
    case revoke(tokenHash: String)
    /// Not sent: the connection came back after a loss.
    case reconnected
    /// Not sent: the connection was lost (messages may go missing until it is back).
    case disconnected
    /// Not sent: a frame that did not open under the cluster's secret (forged, or from a node
    /// with another key), dropped.
    case refused

    var encoded: [UInt8] {
        switch self {
        case .change(let position?, let body, nil, let publishedAt):
            Array("c\n\(position.pts)\n\(position.uid)\n\(publishedAt)\n\(body)".utf8)
        case .change(nil, _, nil, _): []
        case .change(let position, let body, let group?, let publishedAt):
            Array(
                "d\n\(position.map { String($0.pts) } ?? "")\n\(position?.uid ?? "")\n\(publishedAt)\n\(group.conversationId)\n\(group.pts)\n\(Self.text(group.span))\n\(body)"
                    .utf8)
        case .typing(let uid, let frame): Array("t\n\(uid)\n".utf8) + frame
        case .groupTyping(let guid, let sender, let frame): Array("g\n\(guid)\n\(sender)\n".utf8) + frame
        case .revoke(let hash): Array("r\n\(hash)".utf8)
        case .reconnected, .disconnected, .refused: []
        }
    }

    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        let newline = UInt8(ascii: "\n")
        let kind = bytes.first.map { String(decoding: [$0], as: UTF8.self) }
        let fields = bytes.split(separator: newline, maxSplits: kind == "d" ? 7 : 4, omittingEmptySubsequences: false)
        let text = { (index: Int) in String(decoding: fields[index], as: UTF8.self) }
        switch (fields.first.map { String(decoding: $0, as: UTF8.self) }, fields.count) {
        case ("c", 5):
            guard let pts = Int64(text(1)), let publishedAt = Int64(text(3)) else { return nil }
            self = .change(Position(uid: text(2), pts: pts), body: text(4), group: nil, publishedAt: publishedAt)
        case ("d", 8):
            guard let publishedAt = Int64(text(3)), let groupPts = Int64(text(5)), let span = Self.span(text(6)) else {
                return nil
            }
            let position = Int64(text(1)).map { Position(uid: text(2), pts: $0) }
            guard position != nil || (text(1).isEmpty && text(2).isEmpty) else { return nil }
            self = .change(
                position, body: text(7), group: GroupPlace(conversationId: text(4), pts: groupPts, span: span),
                publishedAt: publishedAt)
        case ("t", 3...):
            // The frame may hold newlines of its own: everything after the uid's line.
            let start = fields[0].count + 1 + fields[1].count + 1
            self = .typing(uid: text(1), frame: Array(bytes[start...]))
        case ("g", 4...):
            let start = fields[0].count + fields[1].count + fields[2].count + 3
            self = .groupTyping(guid: text(1), sender: text(2), frame: Array(bytes[start...]))
        case ("r", 2):
            self = .revoke(tokenHash: text(1))
        default:
            return nil
        }
    }

    /// A span move as the bus writes it.
    static func text(_ span: SpanChange?) -> String {
        switch span {
        case .opens(let uid): "o:" + uid
        case .closes(let uid): "c:" + uid
        case .closesAll: "a"
        case nil: ""
        }
    }

    /// A span move the bus wrote (`text`); nil when it is none of them (the frame is refused),
    /// `.some(nil)` for none.
    static func span(_ text: String) -> SpanChange?? {
        if text.isEmpty { return .some(nil) }
        if text == "a" { return .closesAll }
        if text.hasPrefix("o:") { return .opens(String(text.dropFirst(2))) }
        if text.hasPrefix("c:") { return .closes(String(text.dropFirst(2))) }
        return nil
    }
}
