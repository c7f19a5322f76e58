import Foundation
import OfflineChatCache
import OfflineChatLocking

/// The two phases of a read, for the `async` forms.
public enum FetchPhase<Item: Sendable>: Sendable {
    /// From the cache; fires first, even when empty (lists).
    case cached([Item])
    /// The server's answer for the same slice, already written through.
    case server([Item])
}

/// What a finished fetch produced, for the request object's paging.
struct FetchOutcome<Item: Sendable>: Sendable {
    var cached: [Item]?
    var server: [Item]?
}

extension ChatClient {
    /// One two-phase read (invariant 5). With offline support on, `cached` answers first on
    /// the callback queue, even when empty; then `server` asks chatd and writes its answer
    /// through before `onServer` fires. No answer ends in `onError` with
    /// `ERROR_INTERNET_UNAVAILABLE`; a server error reaches `onError` unchanged. Exactly one
    /// of `onServer` / `onError` fires, after the cached phase. `finished` (the request's own
    /// bookkeeping) runs on the callback queue just before that last callback. The read is a
    /// task of the session it started in: a logout cancels it, and a read the end cut short
    /// fails `ERROR_USER_NOT_LOGGED_IN` (never a "closed cache" error).
    func twoPhase<Item: Sendable>(
        cached: (@Sendable (ChatCache) throws -> [Item])?,
        server: @escaping @Sendable (UserSession) async throws -> [Item],
        onCached: (@Sendable ([Item]) -> Void)?,
        onServer: @escaping @Sendable ([Item]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void,
        finished: @escaping @Sendable (FetchOutcome<Item>) -> Void = { _ in }
    ) {
        let queue = config.callbackQueue
        let notLoggedIn = { @Sendable in
            queue.async {
                finished(FetchOutcome())
                onError(.notLoggedIn())
            }
        }
        guard let current = session.current else { return notLoggedIn() }
        let started = current.tasks.start { [self] in
            // Ended before it began: no cached phase from a closed cache.
            if Task.isCancelled { return notLoggedIn() }
            var outcome = FetchOutcome<Item>()
            if let cache = current.cache, let cached, let onCached {
                let items: [Item]
                do { items = try cached(cache) } catch {
                    config.logger.log(.error, "cached read failed: \(error)")
                    items = []
                }
                outcome.cached = items
                queue.async { onCached(items) }
            }
            // The request's own bookkeeping (paging, its one-fetch gate) settles before the
            // callback, so an app may start the next fetch from inside it.
            do {
                // Given up at once when the session ends (the HTTP transport on Linux does not
                // stop for a cancellation); a late answer is dropped.
                let items = try await abandoningOnCancel({ try await server(current) }, late: { _ in })
                outcome.server = items
                let settled = outcome
                queue.async {
                    finished(settled)
                    onServer(items)
                }
            } catch {
                let exception =
                    Task.isCancelled  // the session ended
                    ? .notLoggedIn() : error as? ChatException ?? ChatException(.cacheFailure, "\(error)")
                let settled = outcome
                queue.async {
                    finished(settled)
                    onError(exception)
                }
            }
        }
        if started == nil { notLoggedIn() }  // the session ended meanwhile
    }

    /// The `async` form of a two-phase read: `.cached` (when offline support is on), then
    /// `.server`; offline, the stream throws `ERROR_INTERNET_UNAVAILABLE` after `.cached`.
    func phases<Item: Sendable>(
        _ start: (
            @escaping @Sendable ([Item]) -> Void, @escaping @Sendable ([Item]) -> Void,
            @escaping @Sendable (ChatException) -> Void
        ) -> Void
    ) -> AsyncThrowingStream<FetchPhase<Item>, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: FetchPhase<Item>.self, throwing: (any Error).self)
        start(
            { continuation.yield(.cached($0)) },
            { items in
                continuation.yield(.server(items))
                continuation.finish()
            },
            { continuation.finish(throwing: $0) })
        return stream
    }
}

/// One fetch at a time per request object.
final class FetchGate: Sendable {
    private let busy = Locked(false)

    /// True when the caller may start a fetch (and must call `end()` when it settles).
    func begin() -> Bool {
        busy.withLock { value in
            defer { value = true }
            return !value
        }
    }
    func end() { busy.withLock { $0 = false } }
}

extension ChatClient {
    /// Keeps a server answer in the cache. A cache that cannot take it (a full disk, say) is
    /// logged: the answer still reaches the app, and the cache serves what it had.
    func keep(_ body: () throws -> Void) {
        keep((), body)
    }

    func keep<T>(_ fallback: T, _ body: () throws -> T) -> T {
        do {
            return try body()
        } catch {
            config.logger.log(.error, "the cache did not take a server answer: \(error)")
            return fallback
        }
    }
}
