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
        var status: @Sendable (ConnectionStatus) -> Void
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
    private let loop = Locked<Task<Void, Never>?>(nil)
    private let socket = Locked<(any RealtimeSocket)?>(nil)
    private let currentStatus = Locked(ConnectionStatus.disconnected)

    init(url: URL, token: String, transport: any RealtimeTransport, config: ChatConfig) {
        self.url = url
        self.token = token
        self.transport = transport
        self.config = config
    }

    var status: ConnectionStatus { currentStatus.current }

    /// Connects, and keeps connecting, telling `handlers` (bound to the session that owns this
    /// connection) what happens. The loop and each settle check run as `tasks` of that session,
    /// so its end cancels them and awaits them (a connect in flight is abandoned, not awaited).
    func start(_ handlers: Handlers, in tasks: SessionTasks) {
        loop.withLock { task in
            guard task == nil else { return }
            task = tasks.start { [self] in await run(handlers, tasks) }
        }
    }

    /// Closes the socket and stops reconnecting.
    func stop() {
        let task = loop.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        socket.withLock { $0 }?.close()
    }

    /// Sends a text frame; false when not connected.
    @discardableResult
    func send(_ text: String) -> Bool {
        guard let socket = socket.current else { return false }
        return (try? socket.send(text)) != nil
    }

    private func set(_ status: ConnectionStatus, _ handlers: Handlers) {
        let changed = currentStatus.withLock { current -> Bool in
            defer { current = status }
            return current != status
        }
        if changed { handlers.status(status) }
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
                guard !Task.isCancelled else {
                    opened.close()
                    break
                }
                socket.withLock { $0 = opened }
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
            socket.withLock { $0 = nil }
            let retry = rules.withLock { $0.dropped(unit: Double.random(in: 0..<1)) }
            set(.disconnected, handlers)
            guard !Task.isCancelled, await handlers.shouldRetry(), case .retry(let delay) = retry else { break }
            do { try await config.clock.sleep(milliseconds: delay) } catch { break }
        }
        set(.disconnected, handlers)
    }
}
