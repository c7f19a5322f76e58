import Testing

@testable import ChatServer

/// What a node remembers of the tokens it checked (`SessionCache`): never past its lifetime,
/// never after a revocation, nothing while revocations could go unheard.
@Suite struct SessionCacheTests {
    let cache = SessionCache(lifetime: 5_000, capacity: 3)

    /// An entry for the token `uid` + "-token", whose hash is `uid` + "-hash".
    func entry(_ uid: String = "ann", checkedAt: Int64 = 1_000) -> SessionCache.Entry {
        SessionCache.Entry(uid: uid, expiresAt: 99, lastActiveAt: 0, checkedAt: checkedAt, hash: uid + "-hash")
    }

    @Test func anEntryServesForItsLifetimeOnly() {
        cache.remember("ann-token", entry(), readAfter: cache.currentGeneration)
        #expect(cache.entry("ann-token", at: 1_000) == entry())
        #expect(cache.entry("ann-token", at: 5_999) == entry())
        #expect(cache.entry("ann-token", at: 6_000) == nil, "the database is asked again after the lifetime")
        #expect(cache.entry("other", at: 1_000) == nil)
    }

    @Test func aRevokedTokenIsForgottenAndACheckThatRacedItIsNotKept() {
        cache.remember("ann-token", entry(), readAfter: cache.currentGeneration)
        let before = cache.currentGeneration  // a check reads the database…
        cache.forget("ann-hash")  // …while the token is revoked
        #expect(cache.entry("ann-token", at: 1_000) == nil)
        cache.remember("ann-token", entry(), readAfter: before)
        #expect(cache.entry("ann-token", at: 1_000) == nil, "what the check read may be the revoked token")
        cache.remember("ann-token", entry(), readAfter: cache.currentGeneration)
        #expect(cache.entry("ann-token", at: 1_000) != nil, "a check after the revocation is kept")
    }

    /// Entries are found by token, and a revocation (which names the hash) finds the token.
    @Test func aRevocationByHashForgetsOnlyThatToken() {
        cache.remember("ann-token", entry("ann"), readAfter: cache.currentGeneration)
        cache.remember("ben-token", entry("ben"), readAfter: cache.currentGeneration)
        #expect(cache.entry("ann-hash", at: 1_000) == nil, "a hash does not open an entry")
        cache.forget("ann-token")
        #expect(cache.entry("ann-token", at: 1_000) != nil, "a token is not a hash")
        cache.forget("ann-hash")
        #expect(cache.entry("ann-token", at: 1_000) == nil)
        #expect(cache.entry("ben-token", at: 1_000) == entry("ben"))
    }

    @Test func nothingIsTrustedWhileTheBusIsDownAndTheCacheStartsEmptyAfter() {
        cache.remember("ann-token", entry(), readAfter: cache.currentGeneration)
        cache.setTrusted(false)
        #expect(cache.entry("ann-token", at: 1_000) == nil)
        cache.remember("ann-token", entry(), readAfter: cache.currentGeneration)
        #expect(cache.entry("ann-token", at: 1_000) == nil)
        cache.setTrusted(true)
        #expect(cache.entry("ann-token", at: 1_000) == nil, "nothing from before the loss survives")
        cache.remember("ann-token", entry(), readAfter: cache.currentGeneration)
        #expect(cache.entry("ann-token", at: 1_000) != nil)
    }

    @Test func aFullCacheStartsOver() {
        for token in ["a", "b", "c"] { cache.remember(token, entry(token), readAfter: cache.currentGeneration) }
        cache.remember("a", entry("a2"), readAfter: cache.currentGeneration)
        #expect(cache.entry("b", at: 1_000) != nil, "replacing an entry does not count as a new one")
        cache.remember("d", entry("d"), readAfter: cache.currentGeneration)
        #expect(cache.entry("d", at: 1_000) != nil)
        #expect(cache.entry("a", at: 1_000) == nil && cache.entry("b", at: 1_000) == nil)
    }
}
