import Testing

@testable import ChatServer

/// What a node remembers of the tokens it checked (`SessionCache`): never past its lifetime,
/// never after a revocation, nothing while revocations could go unheard.
@Suite struct SessionCacheTests {
    let cache = SessionCache(lifetime: 5_000, capacity: 3)

    func entry(_ uid: String = "ann", checkedAt: Int64 = 1_000) -> SessionCache.Entry {
        SessionCache.Entry(uid: uid, expiresAt: 99, lastActiveAt: 0, checkedAt: checkedAt)
    }

    @Test func anEntryServesForItsLifetimeOnly() {
        cache.remember("h", entry(), readAfter: cache.currentGeneration)
        #expect(cache.entry("h", at: 1_000) == entry())
        #expect(cache.entry("h", at: 5_999) == entry())
        #expect(cache.entry("h", at: 6_000) == nil, "the database is asked again after the lifetime")
        #expect(cache.entry("other", at: 1_000) == nil)
    }

    @Test func aRevokedTokenIsForgottenAndACheckThatRacedItIsNotKept() {
        cache.remember("h", entry(), readAfter: cache.currentGeneration)
        let before = cache.currentGeneration  // a check reads the database…
        cache.forget("h")  // …while the token is revoked
        #expect(cache.entry("h", at: 1_000) == nil)
        cache.remember("h", entry(), readAfter: before)
        #expect(cache.entry("h", at: 1_000) == nil, "what the check read may be the revoked token")
        cache.remember("h", entry(), readAfter: cache.currentGeneration)
        #expect(cache.entry("h", at: 1_000) != nil, "a check after the revocation is kept")
    }

    @Test func nothingIsTrustedWhileTheBusIsDownAndTheCacheStartsEmptyAfter() {
        cache.remember("h", entry(), readAfter: cache.currentGeneration)
        cache.setTrusted(false)
        #expect(cache.entry("h", at: 1_000) == nil)
        cache.remember("h", entry(), readAfter: cache.currentGeneration)
        #expect(cache.entry("h", at: 1_000) == nil)
        cache.setTrusted(true)
        #expect(cache.entry("h", at: 1_000) == nil, "nothing from before the loss survives")
        cache.remember("h", entry(), readAfter: cache.currentGeneration)
        #expect(cache.entry("h", at: 1_000) != nil)
    }

    @Test func aFullCacheStartsOver() {
        for hash in ["a", "b", "c"] { cache.remember(hash, entry(hash), readAfter: cache.currentGeneration) }
        cache.remember("a", entry("a2"), readAfter: cache.currentGeneration)
        #expect(cache.entry("b", at: 1_000) != nil, "replacing an entry does not count as a new one")
        cache.remember("d", entry("d"), readAfter: cache.currentGeneration)
        #expect(cache.entry("d", at: 1_000) != nil)
        #expect(cache.entry("a", at: 1_000) == nil && cache.entry("b", at: 1_000) == nil)
    }
}
