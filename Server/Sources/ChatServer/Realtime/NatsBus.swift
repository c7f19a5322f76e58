import CNats
import Foundation

/// The realtime bus between chatd nodes, on NATS core. Each committed change is published
/// once per reader to `chatd.u.<uid>` with the reader's position; a node subscribes only for
/// the users with a socket on it, and does not hear its own publications (it delivered those
/// itself). NATS core is at most once: a message lost in a restart or a reconnect is a gap in
/// a socket's positions, which the socket fills from the inbox (`ChangeOrder`), and every
/// reconnect is followed by a catch-up of every connected user.
final class NatsBus: @unchecked Sendable {  // `subscriptions` is only touched under `lock`; the handle is thread-safe
    private var connection: OpaquePointer?
    private let lock = NSLock()
    private var subscriptions: [String: (subscription: OpaquePointer?, sockets: Int)] = [:]
    /// A change for one of this node's users from another node; the connection came back
    /// after a loss (messages may have been missed). Set once by the hub.
    private var handlers: (received: @Sendable (Position, String) -> Void, reconnected: @Sendable () -> Void)?

    /// Connects to `url` (`nats://host:port`), reconnecting for as long as it takes.
    init(url: String) throws {
        var options: OpaquePointer?
        try Self.check(natsOptions_Create(&options), "options")
        defer { natsOptions_Destroy(options) }
        try Self.check(natsOptions_SetURL(options, url), "url \(url)")
        try Self.check(natsOptions_SetNoEcho(options, true), "no echo")
        try Self.check(natsOptions_SetMaxReconnect(options, -1), "reconnects")
        try Self.check(natsOptions_SetReconnectWait(options, 250), "reconnect wait")
        let context = Unmanaged.passUnretained(self).toOpaque()
        try Self.check(natsOptions_SetReconnectedCB(options, busReconnected, context), "reconnected callback")
        var connection: OpaquePointer?
        try Self.check(natsConnection_Connect(&connection, options), "connect to \(url)")
        self.connection = connection
    }

    deinit { close() }

    func setHandlers(received: @escaping @Sendable (Position, String) -> Void, reconnected: @escaping @Sendable () -> Void) {
        lock.lock()
        handlers = (received, reconnected)
        lock.unlock()
    }

    func deliver(_ position: Position, _ body: String) {
        lock.lock()
        let received = handlers?.received
        lock.unlock()
        received?(position, body)
    }

    func announceReconnect() {
        lock.lock()
        let reconnected = handlers?.reconnected
        lock.unlock()
        reconnected?()
    }

    func close() {
        lock.lock()
        let handle = connection
        connection = nil
        subscriptions = [:]
        lock.unlock()
        guard let handle else { return }
        natsConnection_Close(handle)
        natsConnection_Destroy(handle)
    }

    var isConnected: Bool {
        lock.lock()
        defer { lock.unlock() }
        return connection.map { natsConnection_Status($0) == NATS_CONN_STATUS_CONNECTED } ?? false
    }

    /// `chatd.u.<uid>`: a uid's dots are escaped (a dot separates subject tokens).
    static func subject(_ uid: String) -> String { "chatd.u." + uid.replacingOccurrences(of: ".", with: "%2E") }

    /// Each reader's position and the change, `<pts>\n<uid>\n<stored change>`.
    func publish(_ changes: [PublishedChange]) {
        lock.lock()
        defer { lock.unlock() }
        guard let connection else { return }
        for change in changes {
            for position in change.positions {
                let payload = Array("\(position.pts)\n\(position.uid)\n\(change.body)".utf8)
                _ = natsConnection_Publish(connection, Self.subject(position.uid), payload, Int32(payload.count))
            }
        }
    }

    /// A socket of `uid` opens on this node: subscribe for the first one.
    func retain(_ uid: String) {
        lock.lock()
        defer { lock.unlock() }
        if var entry = subscriptions[uid] {
            entry.sockets += 1
            subscriptions[uid] = entry
            return
        }
        var subscription: OpaquePointer?
        if let connection {
            _ = natsConnection_Subscribe(&subscription, connection, Self.subject(uid), busMessage,
                                         Unmanaged.passUnretained(self).toOpaque())
            _ = natsConnection_Flush(connection)  // subscribed before the caller reads the user's position
        }
        subscriptions[uid] = (subscription, 1)
    }

    /// A socket of `uid` closed: unsubscribe after the last one.
    func release(_ uid: String) {
        lock.lock()
        defer { lock.unlock() }
        guard var entry = subscriptions[uid] else { return }
        entry.sockets -= 1
        guard entry.sockets == 0 else {
            subscriptions[uid] = entry
            return
        }
        subscriptions[uid] = nil
        if let subscription = entry.subscription {
            _ = natsSubscription_Unsubscribe(subscription)
            natsSubscription_Destroy(subscription)
        }
    }

    /// `<pts>\n<uid>\n<body>` back into a position and the stored change.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> (Position, String)? {
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let pts = Int64(parts[0]) else { return nil }
        return (Position(uid: String(parts[1]), pts: pts), String(parts[2]))
    }

    static func check(_ status: natsStatus, _ what: String) throws {
        guard status == NATS_OK else {
            throw StoreError.unavailable("NATS: \(what): \(String(cString: natsStatus_GetText(status)))")
        }
    }
}

/// NATS calls these on its own threads (C callbacks live outside main.swift).
private let busMessage: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    _, _, message, context in
    guard let message, let context else { return }
    defer { natsMsg_Destroy(message) }
    let bus = Unmanaged<NatsBus>.fromOpaque(context).takeUnretainedValue()
    guard let data = natsMsg_GetData(message) else { return }
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self),
                                    count: Int(natsMsg_GetDataLength(message)))
    if let (position, body) = NatsBus.parse(bytes) { bus.deliver(position, body) }
}

private let busReconnected: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, context in
    guard let context else { return }
    Unmanaged<NatsBus>.fromOpaque(context).takeUnretainedValue().announceReconnect()
}
