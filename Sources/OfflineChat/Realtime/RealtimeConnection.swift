import ChatCache
import Foundation
import Locking

/// Keeps the realtime socket open while a user is logged in: connects, hands every
/// envelope to `onEnvelope` in order, and after a drop reconnects with jittered exponential
/// backoff read from the injected clock. A connection that stays up for the settle delay
/// reports `onSettled` once (the outbox flushes, then the catch-up sync runs), never before
/// its first envelope (the server's hello) has been handled.
final class RealtimeConnection: Sendable {
    struct Handlers: Sendable {
        /// A status change, reported under the reporting lock: it must not block (no I/O).
        var status: @Sendable (ConnectionStatus) -> Void
        /// The connection dropped: called after `.disconnected` was reported, outside any lock,
        /// before the next connect begins; never once the connection was stopped.
        var dropped: @Sendable () async -> Void
        var envelope: @Sendable (RealtimeEnvelope) async -> Void
        /// A frame that did not decode was skipped.
        var unreadable: @Sendable () async -> Void
        var settled: @Sendable () async -> Void
        /// After a failed connect: false ends the loop (the token is no longer accepted).
        var shouldRetry: @Sendable () async -> Bool
    }

    private let url: URL
    private let token: String
    private let transport: any RealtimeTransport
    private let config: ChatConfig
    /// The loop, the open socket and the status, under one lock: a stop and the loop's steps
    /// (storing a socket it opened, reporting a status) never interleave halfway.
    private struct State {
        var loop: Task<Void, Never>?
        var socket: (any RealtimeSocket)?
        var status = ConnectionStatus.disconnected
        /// Once stopped, the loop reports nothing more and a socket it opens late is closed.
        var stopped = false
    }

    private let state = Locked(State())
    /// Held while a status is reported, and by `stop()` as it stops the connection: a report
    /// under way finishes before the stop returns, and none begins after it.
    private let reporting = Locked(())

    init(url: URL, token: String, transport: any RealtimeTransport, config: ChatConfig) {
        self.url = url
        self.token = token
        self.transport = transport
        self.config = config
    }

    var status: ConnectionStatus { state.withLock { $0.status } }

    /// Connects, and keeps connecting, telling `handlers` (bound to the session that owns this
    /// connection) what happens. The loop and each settle check run as `tasks` of that session,
    /// so its end cancels them (a connect in flight is abandoned, not awaited) and a logout
    /// awaits them.
    func start(_ handlers: Handlers, in tasks: SessionTasks) {
        state.withLock { state in
            guard state.loop == nil, !state.stopped else { return }
            state.loop = tasks.start { [self] in await run(handlers, tasks) }
        }
    }

    /// Closes the socket and stops reconnecting, for good: the status is `.disconnected` at
    /// once and the handlers hear nothing more (a report under way finishes first; the loop's
    /// last steps are silent). Returns whether the connection was up or trying, that is whether
    /// the status changed: the owner decides who is told (a session replaced by a newer one
    /// tells nobody).
    @discardableResult
    func stop() -> Bool {
        let (task, socket, was) = reporting.withLock { _ in
            state.withLock { state in
                defer {
                    state.stopped = true
                    state.loop = nil
                    state.socket = nil
                    state.status = .disconnected
                }
                return (state.loop, state.socket, state.status)
            }
        }
        task?.cancel()
        socket?.close()
        return was != .disconnected
    }

    /// Sends a text frame; false when not connected.
    @discardableResult
    func send(_ text: String) -> Bool {
        guard let socket = state.withLock({ $0.socket }) else { return false }
        return (try? socket.send(text)) != nil
    }

    /// Reports `status` when it is a change, unless the connection was stopped or its session's
    /// end cancelled the loop (the stop that follows reports, if anyone is to hear). Returns
    /// whether it reported.
    @discardableResult
    private func set(_ status: ConnectionStatus, _ handlers: Handlers) -> Bool {
        reporting.withLock { _ in
            guard !Task.isCancelled else { return false }
            let changed = state.withLock { state -> Bool in
                guard !state.stopped, state.status != status else { return false }
                state.status = status
                return true
            }
            if changed { handlers.status(status) }
            return changed
        }
    }

    /// Keeps `opened` as the connection's socket; false once stopped.
    private func keep(_ opened: any RealtimeSocket) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            state.socket = opened
            return true
        }
    }

    private func run(_ handlers: Handlers, _ tasks: SessionTasks) async {
        let rules = Locked(
            Connectivity(
                settleDelay: config.connectionSettleDelay, backoffBase: config.reconnectBaseDelay,
                backoffCap: config.reconnectMaxDelay))
        while !Task.isCancelled {
            set(.connecting, handlers)
            rules.withLock { $0.connecting() }
            do {
                let opened = try await abandoningOnCancel(
                    { [transport, url, token] in try await transport.connect(to: url, token: token) },
                    late: { $0.close() })
                // Stopped meanwhile (or the session's end cancelled the loop): closed, not kept.
                guard !Task.isCancelled, keep(opened) else {
                    opened.close()
                    break
                }
                set(.connected, handlers)
                let check = rules.withLock { $0.opened(now: config.clock.now()) }
                // The settle timer starts once the first envelope (the hello) is handled; its
                // deadline still counts from the connect.
                var settle: Task<Void, Never>?
                defer { settle?.cancel() }
                for try await text in opened.messages {
                    guard let envelope = try? APIClient.decoder.decode(RealtimeEnvelope.self, from: Data(text.utf8))
                    else {
                        config.logger.log(.warning, "ignored an unreadable realtime message")
                        await handlers.unreadable()
                        continue
                    }
                    await handlers.envelope(envelope)
                    if settle == nil {
                        settle = tasks.start { [config, handlers] in
                            guard case .settleCheck(let connection, let at) = check else { return }
                            do { try await config.clock.sleep(milliseconds: max(0, at - config.clock.now())) } catch {
                                return
                            }
                            if rules.withLock({ $0.settleDue(connection: connection, now: config.clock.now()) })
                                == .settled
                            {
                                await handlers.settled()
                            }
                        }
                    }
                }
            } catch {
                config.logger.log(.info, "realtime connection ended: \(error)")
            }
            state.withLock { $0.socket = nil }
            let retry = rules.withLock { $0.dropped(unit: Double.random(in: 0..<1)) }
            if set(.disconnected, handlers) { await handlers.dropped() }
            guard !Task.isCancelled, await handlers.shouldRetry(), case .retry(let delay) = retry else { break }
            do { try await config.clock.sleep(milliseconds: delay) } catch { break }
        }
        set(.disconnected, handlers)
    }
}
