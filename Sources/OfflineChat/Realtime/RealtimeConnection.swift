import Foundation
import OfflineChatCache
import OfflineChatLocking

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
        /// Counts the loops started (and suspensions): a loop whose number is not this one's
        /// reports nothing more, and a socket it opens late is closed, not kept.
        var loopNumber = 0
        var socket: (any RealtimeSocket)?
        var status = ConnectionStatus.disconnected
        /// The wait before the next connect, while the loop backs off (`reconnectNow` ends it).
        var backoff: Task<Void, Never>?
        /// What `start` was given, for `resume` to start a loop again.
        var handlers: Handlers?
        var tasks: SessionTasks?
        var suspended = false
        /// Once stopped, the loop reports nothing more and a socket it opens late is closed.
        var stopped = false

        /// Starts loop number `loopNumber + 1` of `connection` (after `start`, or on `resume`);
        /// returns the loop it replaces, if any, to be cancelled outside the lock.
        mutating func startLoop(_ connection: RealtimeConnection) -> Task<Void, Never>? {
            guard let handlers, let tasks else { return nil }
            let replaced = loop
            loopNumber += 1
            let number = loopNumber
            loop = tasks.start { await connection.run(handlers, tasks, number) }
            return replaced
        }

        /// Takes the loop and the socket away and makes the status `.disconnected`; returns
        /// what there was (to be cancelled and closed outside the lock).
        mutating func takeDown() -> (loop: Task<Void, Never>?, socket: (any RealtimeSocket)?, was: ConnectionStatus) {
            defer {
                loopNumber += 1
                (loop, socket, backoff, status) = (nil, nil, nil, .disconnected)
            }
            return (loop, socket, status)
        }
    }

    private let state = Locked(State())
    /// Held while a status is reported, and by `stop()` and `suspend()` as they take the
    /// connection down: a report under way finishes before they return, and none of that loop's
    /// begins after it.
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
    /// Suspended before it started (the app was in the background when its session began), it
    /// keeps the handlers and connects on `resume()`.
    func start(_ handlers: Handlers, in tasks: SessionTasks) {
        state.withLock { state in
            guard state.handlers == nil, !state.stopped else { return }
            (state.handlers, state.tasks) = (handlers, tasks)
            if !state.suspended { _ = state.startLoop(self) }
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
                state.stopped = true
                return state.takeDown()
            }
        }
        task?.cancel()
        socket?.close()
        return was != .disconnected
    }

    /// Closes the socket and stops reconnecting until `resume()` (the app went to the
    /// background): as `stop()`, except that the status handler hears the `.disconnected`
    /// (when it is a change) and the connection can start again. Returns whether it was up or
    /// trying; false when already suspended or stopped.
    @discardableResult
    func suspend() -> Bool {
        typealias Taken = (loop: Task<Void, Never>?, socket: (any RealtimeSocket)?, was: ConnectionStatus)
        let taken: Taken? = reporting.withLock { _ in
            let down: (Taken, Handlers?)? = state.withLock { state in
                guard !state.stopped, !state.suspended else { return nil }
                state.suspended = true
                return (state.takeDown(), state.handlers)
            }
            guard let (taken, handlers) = down else { return nil }
            if taken.was != .disconnected { handlers?.status(.disconnected) }
            return taken
        }
        guard let taken else { return false }
        taken.loop?.cancel()
        taken.socket?.close()
        return taken.was != .disconnected
    }

    /// Starts connecting again at once after `suspend()`: a new loop, no backoff. Not
    /// suspended, it is `reconnectNow()`.
    func resume() {
        let resumed = state.withLock { state -> (Task<Void, Never>?)? in
            guard !state.stopped, state.suspended else { return nil }
            state.suspended = false
            return .some(state.startLoop(self))
        }
        guard let replaced = resumed else { return reconnectNow() }
        replaced?.cancel()
    }

    /// While the loop waits out a backoff, it connects now instead (the network came back, the
    /// app came to the foreground); otherwise nothing changes.
    func reconnectNow() {
        state.withLock { $0.backoff }?.cancel()
    }

    /// Sends a text frame; false when not connected.
    @discardableResult
    func send(_ text: String) -> Bool {
        guard let socket = state.withLock({ $0.socket }) else { return false }
        return (try? socket.send(text)) != nil
    }

    /// Reports `status` when it is a change, unless loop `number` is no longer the connection's
    /// (stopped, suspended) or its session's end cancelled it (the stop that follows reports, if
    /// anyone is to hear). Returns whether it reported.
    @discardableResult
    private func set(_ status: ConnectionStatus, _ handlers: Handlers, _ number: Int) -> Bool {
        reporting.withLock { _ in
            guard !Task.isCancelled else { return false }
            let changed = state.withLock { state -> Bool in
                guard state.loopNumber == number, state.status != status else { return false }
                state.status = status
                return true
            }
            if changed { handlers.status(status) }
            return changed
        }
    }

    /// Keeps `opened` as the connection's socket; false once loop `number` is not the
    /// connection's any more.
    private func keep(_ opened: any RealtimeSocket, _ number: Int) -> Bool {
        state.withLock { state in
            guard state.loopNumber == number else { return false }
            state.socket = opened
            return true
        }
    }

    /// Loop number `number`: connects, reads, backs off and connects again, until cancelled,
    /// refused for good, or no longer the connection's loop.
    fileprivate func run(_ handlers: Handlers, _ tasks: SessionTasks, _ number: Int) async {
        let rules = Locked(
            Connectivity(
                settleDelay: config.connectionSettleDelay, backoffBase: config.reconnectBaseDelay,
                backoffCap: config.reconnectMaxDelay))
        while !Task.isCancelled {
            set(.connecting, handlers, number)
            rules.withLock { $0.connecting() }
            do {
                let opened = try await abandoningOnCancel(
                    { [transport, url, token] in try await transport.connect(to: url, token: token) },
                    late: { $0.close() })
                // Stopped meanwhile (or the session's end cancelled the loop): closed, not kept.
                guard !Task.isCancelled, keep(opened, number) else {
                    opened.close()
                    break
                }
                set(.connected, handlers, number)
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
                        settle = tasks.start { [self, config, handlers] in
                            guard case .settleCheck(let connection, let at) = check else { return }
                            do { try await config.clock.sleep(milliseconds: max(0, at - config.clock.now())) } catch {
                                return
                            }
                            // Suspended or stopped meanwhile (its loop may not have noticed yet).
                            guard state.current.loopNumber == number else { return }
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
            state.withLock { state in if state.loopNumber == number { state.socket = nil } }
            let retry = rules.withLock { $0.dropped(unit: Double.random(in: 0..<1)) }
            if set(.disconnected, handlers, number) { await handlers.dropped() }
            guard !Task.isCancelled, await handlers.shouldRetry(), case .retry(let delay) = retry,
                await backOff(milliseconds: delay, number)
            else { break }
        }
        set(.disconnected, handlers, number)
    }

    /// Waits `milliseconds` before the next connect, unless `reconnectNow()` ends the wait
    /// first. False when the loop is over (cancelled, or no longer the connection's).
    private func backOff(milliseconds: Int64, _ number: Int) async -> Bool {
        let wait = Task<Void, Never> { [config] in _ = try? await config.clock.sleep(milliseconds: milliseconds) }
        let kept = state.withLock { state in
            guard state.loopNumber == number else { return false }
            state.backoff = wait
            return true
        }
        guard kept else {
            wait.cancel()
            return false
        }
        await withTaskCancellationHandler {
            await wait.value
        } onCancel: {
            wait.cancel()
        }
        state.withLock { state in if state.loopNumber == number { state.backoff = nil } }
        return !Task.isCancelled
    }
}
