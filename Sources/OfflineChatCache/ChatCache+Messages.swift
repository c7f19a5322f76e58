import OfflineChatProtocol
import OfflineChatSQLite

/// Where a message list lives: a conversation's main history, or one thread's replies.
public enum CacheScope: Sendable, Hashable {
    case conversation(String)
    case thread(parentId: Int64)

    var key: String {
        switch self {
        case .conversation(let id): id
        case .thread(let parentId): "thread:\(parentId)"
        }
    }

    enum Kind: CaseIterable {
        case conversation, thread
        var condition: String { self == .conversation ? "conversation_id = ?" : "parent_id = ?" }
    }

    var kind: Kind {
        switch self {
        case .conversation: .conversation
        case .thread: .thread
        }
    }
}

/// The message filters the cache can compute itself; anything else blanks the cached phase.
public struct CachedMessageFilter: Sendable, Equatable {
    public var categories: [MessageCategory] = []
    public var types: [String] = []
    public var hideReplies = false
    public var hideDeleted = false
    public init() {}

    func matches(_ message: MessagePayload) -> Bool {
        (categories.isEmpty || categories.contains(message.category))
            && (types.isEmpty || types.contains(message.type))
            && !(hideReplies && message.parentMessageId != nil)
            && !(hideDeleted && message.deletedAt != nil)
    }
}

/// Which way a page goes from its anchor.
public enum PageAnchor: Sendable, Equatable {
    /// The newest messages (no anchor).
    case latest
    /// Older than this message id.
    case before(Int64)
    /// Newer than this message id.
    case after(Int64)
}

extension ChatCache {
    /// A page from the cache, oldest first, never crossing a hole: only messages inside the
    /// contiguous stretch around the anchor (invariant 4). Empty when the cache knows no
    /// stretch there. `.latest` starts at the newest cached message of the scope.
    public func cachedPage(
        _ scope: CacheScope, _ anchor: PageAnchor, limit: Int,
        filter: CachedMessageFilter = CachedMessageFilter()
    ) throws -> [MessagePayload] {
        try read { db in
            let point: Int64
            switch anchor {
            case .latest:
                // The newest known stretch (a message cached outside any stretch proves nothing).
                guard
                    let top = try db.queryFirst(
                        "SELECT hi FROM ranges WHERE scope = ? ORDER BY hi DESC LIMIT 1",
                        [scope.key])?.get(0, as: Int64.self)
                else { return [] }
                point = top
            case .before(let id): point = id - 1
            case .after(let id): point = id + 1
            }
            guard
                let range = try db.queryFirst(
                    "SELECT lo, hi FROM ranges WHERE scope = ? AND lo <= ? AND hi >= ?",
                    [scope.key, point, point])
            else { return [] }
            let lo: Int64 = try range.get("lo")
            let hi: Int64 = try range.get("hi")
            let newestFirst = if case .after = anchor { false } else { true }
            let (low, high) =
                switch anchor {
                case .latest: (lo, hi)
                case .before(let id): (lo, min(hi, id - 1))
                case .after(let id): (max(lo, id + 1), hi)
                }
            let page = try Self.readPage(
                db, scope: scope, newestFirst: newestFirst, low: low, high: high, limit: limit, filter: filter)
            return newestFirst ? page.reversed() : page
        }
    }

    /// One cached message by server id.
    public func message(id: Int64) throws -> MessagePayload? {
        try read { db in
            try db.queryFirst("SELECT \(MessageRow.columns) FROM messages WHERE id = ?", [id]).map {
                try MessageRow.message($0)
            }
        }
    }

    /// The current connection epoch: pass it as `liveSince` when a fetch starts while the
    /// realtime connection is up.
    public var liveEpoch: Int { liveEpochCounter.current }

    /// Writes a server page through and records what it proves: for an unfiltered page, the
    /// stretch from the anchor to the page's far end (to the start of history when the page
    /// is short; to the live head for a latest or short forward page, when the connection was
    /// up at the fetch's start (`liveSince`) and has not dropped since). Cached messages of the
    /// scope inside that stretch that the server did not return are dropped (the page
    /// replaces its slice).
    public func storePage(
        _ messages: [MessagePayload], scope: CacheScope, anchor: PageAnchor, limit: Int,
        complete: Bool, liveSince: Int?
    ) throws {
        try write { db, scratch in
            // Checked under the writer's lock, where `closeOpenRanges` also runs.
            let live = liveSince != nil && liveSince == liveEpochCounter.current
            for message in messages { try upsert(db, message) }
            for id in Set(messages.map(\.conversationId)) { try noteUse(db, id, in: &scratch) }
            if case .conversation(let id) = scope { try noteUse(db, id, in: &scratch) }
            guard complete else { return }
            let ids = messages.map(\.id)
            let short = messages.count < limit
            let lo: Int64
            let hi: Int64
            let open: Bool
            switch anchor {
            case .latest:
                lo = short ? 0 : ids.min()!
                hi = ids.max() ?? 0
                open = live
            case .before(let id):
                lo = short ? 0 : ids.min()!
                hi = id - 1
                open = false
            case .after(let id):
                lo = id + 1
                hi = max(ids.max() ?? id, id)
                open = short && live
            }
            guard lo <= hi || (lo == hi + 1 && open) else { return }
            // The page replaces its slice: anything else cached there is gone on the server.
            let keep = Set(ids)
            let stale = try db.query(
                "SELECT id FROM messages WHERE \(Self.scopeCondition(scope)) AND id BETWEEN ? AND ?",
                [Self.scopeValue(scope), lo, hi]
            ).map { try $0.get("id") as Int64 }.filter { !keep.contains($0) }
            for id in stale { try db.run("DELETE FROM messages WHERE id = ?", [id]) }
            try addRange(db, scope: scope, lo: lo, hi: max(lo, hi), open: open)
        }
    }

    /// A message pushed live (realtime): stored, and the scope's open stretch (or a new one
    /// holding just it) extended to it. Replies also extend their thread's stretch.
    @discardableResult
    public func storeLive(_ message: MessagePayload) throws -> Bool {
        try write { db, scratch in
            let inserted = try upsert(db, message)
            try noteUse(db, message.conversationId, in: &scratch)
            try bumpConversation(db, with: message, incoming: message.sender != uid)
            try extendLive(db, scope: .conversation(message.conversationId), to: message.id)
            if let parent = message.parentMessageId {
                try extendLive(db, scope: .thread(parentId: parent), to: message.id)
            }
            return inserted
        }
    }

    /// Stores changed messages (edits, deletions, reactions, sync pages) without claiming
    /// anything about their neighbours.
    public func storeUpdates(_ messages: [MessagePayload]) throws {
        try write { db, scratch in
            for message in messages { try upsert(db, message) }
            for id in Set(messages.map(\.conversationId)) { try noteUse(db, id, in: &scratch) }
        }
    }

    /// The connection dropped: no stretch reaches the live head any more.
    public func closeOpenRanges() throws {
        try write { db, _ in
            liveEpochCounter.withLock { $0 += 1 }
            try Self.closeLiveRanges(db)
        }
    }

    /// The stretches of a scope, for tests and diagnostics.
    public func ranges(_ scope: CacheScope) throws -> [(lo: Int64, hi: Int64, open: Bool)] {
        try read { db in
            try db.query("SELECT lo, hi, open FROM ranges WHERE scope = ? ORDER BY lo", [scope.key]).map {
                (try $0.get("lo"), try $0.get("hi"), try $0.get("open", as: Int.self) != 0)
            }
        }
    }

    // MARK: - Internals

    /// Reads up to `limit` messages of `scope` with ids in `low…high` that pass `filter`,
    /// from the high end (`newestFirst`) or the low end. Filters run in Swift on the rows, so
    /// a filtered read goes on in batches until the page is full or the stretch ends.
    static func readPage(
        _ db: Connection, scope: CacheScope, newestFirst: Bool, low: Int64, high: Int64, limit: Int,
        filter: CachedMessageFilter
    ) throws -> [MessagePayload] {
        var page: [MessagePayload] = []
        page.reserveCapacity(limit)
        var cursor = newestFirst ? high : low
        let sql = (newestFirst ? pageBackward : pageForward)[scope.kind]!
        let unfiltered = filter == CachedMessageFilter()
        let batch = unfiltered ? limit : limit * 2
        while page.count < limit && (newestFirst ? cursor >= low : cursor <= high) {
            var read = 0
            var last = cursor
            try db.forEachRow(sql, [scopeValue(scope), cursor, low, high, batch]) {
                (row: borrowing RowCursor) throws -> Bool in
                read += 1
                let message = try MessageRow.message(row)
                last = message.id
                if unfiltered || filter.matches(message) { page.append(message) }
                return page.count < limit
            }
            if read < batch { break }
            cursor = newestFirst ? last - 1 : last + 1
        }
        return page
    }

    /// The page queries per scope kind (fixed SQL texts, so their statements are cached).
    static let pageBackward = Dictionary(
        uniqueKeysWithValues: CacheScope.Kind.allCases.map { kind in
            (
                kind,
                "SELECT \(MessageRow.columns) FROM messages WHERE \(kind.condition) AND id <= ? AND id BETWEEN ? AND ? ORDER BY id DESC LIMIT ?"
            )
        })
    static let pageForward = Dictionary(
        uniqueKeysWithValues: CacheScope.Kind.allCases.map { kind in
            (
                kind,
                "SELECT \(MessageRow.columns) FROM messages WHERE \(kind.condition) AND id >= ? AND id BETWEEN ? AND ? ORDER BY id ASC LIMIT ?"
            )
        })

    static func scopeCondition(_ scope: CacheScope) -> String {
        switch scope {
        case .conversation: "conversation_id = ?"
        case .thread: "parent_id = ?"
        }
    }

    static func scopeValue(_ scope: CacheScope) -> any SQLValueConvertible {
        switch scope {
        case .conversation(let id): id
        case .thread(let parentId): parentId
        }
    }

    /// Inserts or refreshes one message, keeping the newer state by `updatedAt`. A server
    /// copy of one's own queued message (same sender and muid) takes over its row.
    /// True when the message got a row of its own (the cache held none with its id, or its
    /// sender and muid).
    @discardableResult
    func upsert(_ db: Connection, _ message: MessagePayload) throws -> Bool {
        try db.cachedStatement(MessageRow.update).run { try MessageRow.bind(message, to: $0) }
        guard db.changes == 0 else { return false }
        try db.cachedStatement(MessageRow.insert).run { try MessageRow.bind(message, to: $0) }
        return db.changes > 0
    }

    /// Adds a stretch and merges it with every stretch it overlaps or touches. The merged
    /// stretch reaches the live head if the highest one did; closed, it reaches the sync point
    /// the highest one reached (`provenAt`, see `applySyncPage`).
    func addRange(_ db: Connection, scope: CacheScope, lo: Int64, hi: Int64, open: Bool, provenAt: Int64? = nil) throws
    {
        try addRange(db, scope: scope.key, lo: lo, hi: hi, open: open, provenAt: provenAt)
    }

    func addRange(_ db: Connection, scope: String, lo: Int64, hi: Int64, open: Bool, provenAt: Int64? = nil) throws {
        let touching = try db.query(
            "SELECT rowid, lo, hi, open, proven_at FROM ranges WHERE scope = ? AND lo <= ? AND hi >= ?",
            [scope, hi + 1, lo - 1])
        var newLo = lo
        var newHi = hi
        var newOpen = open
        var newProven = provenAt
        for row in touching {
            let rowLo: Int64 = try row.get("lo")
            let rowHi: Int64 = try row.get("hi")
            let rowOpen = try row.get("open", as: Int.self) != 0
            let rowProven: Int64? = try row.get("proven_at")
            if rowHi > newHi {
                (newOpen, newProven) = (rowOpen, rowProven)
            } else if rowHi == newHi {
                newOpen = newOpen || rowOpen
                newProven = [newProven, rowProven].compactMap { $0 }.max()
            }
            newLo = min(newLo, rowLo)
            newHi = max(newHi, rowHi)
            try db.run("DELETE FROM ranges WHERE rowid = ?", [try row.get("rowid") as Int64])
        }
        try db.run(
            "INSERT INTO ranges(scope, lo, hi, open, proven_at) VALUES (?, ?, ?, ?, ?)",
            [scope, newLo, newHi, newOpen ? 1 : 0, newOpen ? nil : newProven])
    }

    func extendLive(_ db: Connection, scope: CacheScope, to id: Int64) throws {
        if let row = try db.queryFirst(
            "SELECT rowid, hi FROM ranges WHERE scope = ? AND open = 1 ORDER BY hi DESC", [scope.key])
        {
            let hi: Int64 = try row.get("hi")
            if id > hi { try db.run("UPDATE ranges SET hi = ? WHERE rowid = ?", [id, try row.get("rowid") as Int64]) }
        } else if try db.queryFirst("SELECT 1 FROM ranges WHERE scope = ? AND lo <= ? AND hi >= ?", [scope.key, id, id])
            == nil
        {
            try addRange(db, scope: scope, lo: id, hi: id, open: true)
        }
    }
}
