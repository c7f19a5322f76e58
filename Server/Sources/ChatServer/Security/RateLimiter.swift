import OfflineChatLocking
import OfflineChatProtocol

/// Per-user token buckets, one per kind of request: each request takes a token; tokens come
/// back at the configured rate up to a burst. An empty bucket answers 429 with `Retry-After`
/// (whole seconds until a token is back), and the request does nothing. Time is chatd's
/// clock, so tests move it instead of waiting.
final class RateLimiter: Sendable {
    enum Kind: Int, Sendable, CaseIterable {
        /// Every authenticated POST, PUT, PATCH and DELETE that is not one of the others.
        case write
        /// `POST /v1/groups/{guid}/join`.
        case join
        /// `POST /v1/media`.
        case upload
        /// A group password hashed or checked (create, edit, join): scrypt is slow on purpose.
        case passwordHash
    }

    /// `perMinute` tokens a minute, at most `burst` at once; 0 per minute: no limit.
    struct Rule: Sendable, Equatable {
        var perMinute: Int
        var burst: Int

        /// The rule for `perMinute` with a burst of half a minute's worth.
        init(perMinute: Int) {
            self.perMinute = perMinute
            burst = max(1, perMinute / 2)
        }
    }

    private struct Key: Hashable {
        let uid: String
        let kind: Kind
    }

    private struct Bucket {
        var tokens: Double
        var updated: Int64
    }

    /// Past this many buckets, full ones are forgotten (a full bucket is the same as none).
    private static let pruneAbove = 50_000
    private let rules: [Kind: Rule]
    private let clock: any ServerClock
    private let buckets = Locked<[Key: Bucket]>([:])

    init(rules: [Kind: Rule], clock: any ServerClock) {
        self.rules = rules
        self.clock = clock
    }

    /// Takes a token from `uid`'s `kind` bucket, or throws 429 `rate_limited`.
    func admit(_ uid: String, _ kind: Kind) throws {
        guard let rule = rules[kind], rule.perMinute > 0 else { return }
        let now = clock.now()
        let perMillisecond = Double(rule.perMinute) / 60_000
        let wait: Int64? = buckets.withLock { buckets in
            if buckets.count > Self.pruneAbove { Self.prune(&buckets, rules: rules, now: now) }
            let key = Key(uid: uid, kind: kind)
            var bucket = buckets[key] ?? Bucket(tokens: Double(rule.burst), updated: now)
            bucket.tokens = min(
                Double(rule.burst), bucket.tokens + Double(max(0, now - bucket.updated)) * perMillisecond)
            bucket.updated = now
            defer { buckets[key] = bucket }
            guard bucket.tokens >= 1 else { return Int64(((1 - bucket.tokens) / perMillisecond).rounded(.up)) }
            bucket.tokens -= 1
            return nil
        }
        if let wait { throw HTTPError.rateLimited(retryAfterMilliseconds: wait, "too many \(kind) requests") }
    }

    private static func prune(_ buckets: inout [Key: Bucket], rules: [Kind: Rule], now: Int64) {
        buckets = buckets.filter { key, bucket in
            guard let rule = rules[key.kind] else { return false }
            return bucket.tokens + Double(now - bucket.updated) * Double(rule.perMinute) / 60_000 < Double(rule.burst)
        }
    }
}
