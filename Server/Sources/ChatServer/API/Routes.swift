import ChatProtocol
import Foundation

/// chatd's HTTP API under /v1. Each route authenticates (`signedIn`), validates, calls the store.
struct Routes {
    let store: Store
    let adminKey: String
    let clock: AdjustableClock?
    let realtime: RealtimeHub
    let metrics: Metrics
    let media: MediaStore
    let mediaSweep: MediaSweep
    let limits: RateLimiter
    let joinBackoff: JoinBackoff
    /// Bytes of uploads one user may hold; 0: no quota.
    let mediaQuota: Int64
    /// Attachments may name https urls elsewhere (`--allow-https-media`).
    var allowHTTPSMedia = false
    /// The realtime token may come as `?token=` (`--allow-query-token`).
    var allowQueryToken = false

    func router() -> Router {
        var router = Router()
        router.add("GET", Endpoints.health) { _ in
            let reachable = store.isReachable()
            return .json(
                HealthResponse(
                    status: reachable ? "ok" : "unavailable", version: Endpoints.version,
                    engine: store.engineName, database: reachable ? "ok" : "unreachable",
                    bus: realtime.bus.map { $0.isConnected ? "ok" : "unreachable" },
                    node: realtime.bus.map { _ in realtime.configuration.nodeID }),
                status: reachable ? 200 : 503)
        }
        router.add("GET", "/metrics") { context in
            // Prometheus sends the admin key as `Authorization: Bearer` (`authorization` in its scrape config).
            let bearerIsAdminKey = context.request.bearerToken.map { constantTimeEqual($0, adminKey) } ?? false
            if context.request.header(Endpoints.adminKeyHeader) != nil || !bearerIsAdminKey {
                try requireAdmin(context)
            }
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                body: Array(metrics.render(gauges: gauges()).utf8))
        }
        addAdmin(to: &router)
        addUsers(to: &router)
        addMessages(to: &router)
        addConversations(to: &router)
        addGroups(to: &router)
        addGroupMembers(to: &router)
        addMedia(to: &router)
        signedIn(&router, "GET", Endpoints.changes) { context, uid in
            let limit =
                try context.intQuery("limit", in: 1...Int64(ChangelogPage.maxLimit)) ?? Int64(ChangelogPage.maxLimit)
            let page = try store.changes(for: uid, cursor: context.request.query["cursor"], limit: Int(limit))
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: page.json)
        }
        signedIn(&router, "GET", Endpoints.notifications) { context, uid in
            let before = try context.intQuery("before", in: 1...Int64.max)
            return .json(try store.notifications(for: uid, before: before, limit: try limit(context)))
        }
        router.add("GET", Endpoints.realtime) { context in
            let token = context.request.bearerToken ?? (allowQueryToken ? context.request.query["token"] : nil)
            if token == nil, context.request.query["token"] != nil {
                throw HTTPError(
                    401, .unauthorized,
                    "send the token in the Authorization header (?token= in the url is off:"
                        + " chatd --allow-query-token turns it on)")
            }
            let session = try store.session(token: token)
            return try realtime.upgrade(
                context.request,
                session: RealtimeSession(
                    uid: session.uid, tokenHash: Store.tokenHash(token ?? ""),
                    expiresAt: session.expiresAt))
        }
        return router
    }

    /// The caller's uid from a bearer token, once the caller's `bucket` admits the request.
    /// Reads (GET, HEAD) take from no bucket; a route with a bucket of its own (joins,
    /// uploads) or none (signing out) says so.
    /// Adds a route for a signed-in caller: `handler` gets their uid (a missing, unknown or
    /// expired token is a 401 before it runs). A write (any method but GET and HEAD) also takes
    /// one from the caller's `bucket` of the rate limits.
    func signedIn(
        _ router: inout Router, _ method: String, _ pattern: String, bucket: RateLimiter.Kind? = .write,
        _ handler: @escaping @Sendable (RouteContext, String) throws -> HTTPResponse
    ) {
        router.add(method, pattern) { context in try handler(context, try authenticate(context, bucket: bucket)) }
    }

    func authenticate(_ context: RouteContext, bucket: RateLimiter.Kind? = .write) throws -> String {
        let uid = try store.authenticate(token: context.request.bearerToken)
        if let bucket, !["GET", "HEAD"].contains(context.request.method) { try limits.admit(uid, bucket) }
        return uid
    }

    func requireAdmin(_ context: RouteContext) throws {
        guard let key = context.request.header(Endpoints.adminKeyHeader), constantTimeEqual(key, adminKey) else {
            throw HTTPError(401, .unauthorized, "admin endpoints need the \(Endpoints.adminKeyHeader) header")
        }
    }

    /// The values `GET /metrics` reads when scraped.
    func gauges() -> [Metrics.Gauge] {
        var gauges = [
            Metrics.Gauge(
                name: "chatd_realtime_sockets", help: "Open realtime sockets on this node.",
                value: Double(realtime.connectionCount.load(ordering: .relaxed))),
            Metrics.Gauge(
                name: "chatd_realtime_users", help: "Users with a realtime socket on this node.",
                value: Double(realtime.presence.here))
        ]
        let commits = store.groupCommit.counts
        gauges += [
            Metrics.Gauge(
                name: "chatd_group_commits", help: "Batches of sends committed together, since start.",
                value: Double(commits.batches)),
            Metrics.Gauge(
                name: "chatd_group_commit_sends", help: "Sends those batches carried, since start.",
                value: Double(commits.writes))
        ]
        if let bus = realtime.bus {
            gauges.append(
                Metrics.Gauge(
                    name: "chatd_bus_connected", help: "1 while this node's NATS connection is up.",
                    value: bus.isConnected ? 1 : 0))
        }
        if let usage = store.connectionUsage {
            gauges += [
                Metrics.Gauge(
                    name: "chatd_db_connections_open", help: "Database connections open.", value: Double(usage.open)),
                Metrics.Gauge(
                    name: "chatd_db_connections_busy", help: "Database connections in a transaction.",
                    value: Double(usage.busy)),
                Metrics.Gauge(
                    name: "chatd_db_connections_max", help: "Database connections the pool may open.",
                    value: Double(usage.capacity)),
                Metrics.Gauge(
                    name: "chatd_db_pool_waits", help: "Times a request waited for a connection, since start.",
                    value: Double(usage.waits))
            ]
        }
        return gauges
    }

    /// `user` with its presence.
    /// The user with their presence, unless they blocked the caller (`hasBlockedMe`): a
    /// blocked user learns neither whether the blocker is online nor when they were last active.
    func withStatus(_ user: UserPayload) -> UserPayload {
        var user = user
        if user.hasBlockedMe == true {
            user.status = nil
            user.lastActiveAt = nil
        } else {
            user.status = realtime.presence.isOnline(user.uid) ? "online" : "offline"
        }
        return user
    }

    /// A comma-separated query argument, at most 50 items.
    static func list(_ value: String?, name: String) throws -> [String] {
        let items = (value ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
        guard items.count <= 50 else { throw HTTPError.badParameter("`\(name)` lists at most 50 values") }
        return items
    }

    /// A page of items fetched with one extra row to learn whether another page follows;
    /// `next` is the last item's key.
    static func page<Item>(_ items: [Item], limit: Int, key: (Item) -> String) -> Page<Item> {
        Page(items: Array(items.prefix(limit)), next: items.count > limit ? key(items[limit - 1]) : nil)
    }

    /// Who is online as `uid` may know it: a user who blocked them counts as offline, so a
    /// `status=` filter does not reveal what `withStatus` hides.
    func onlineUids(as uid: String) throws -> Set<String> {
        realtime.presence.online.subtracting(try store.blockers(of: uid))
    }

    /// `status=online|offline` as true / false, absent as nil.
    func onlineFilter(_ context: RouteContext) throws -> Bool? {
        switch context.request.query["status"] {
        case nil, "": nil
        case "online": true
        case "offline": false
        default: throw HTTPError.badParameter("`status` must be online or offline")
        }
    }

    func limit(_ context: RouteContext, default value: Int = 30) throws -> Int {
        Int(try context.intQuery("limit", in: 1...100) ?? Int64(value))
    }

    func addAdmin(to router: inout Router) {
        router.add("POST", Endpoints.adminUsers) { context in
            try requireAdmin(context)
            let request = try context.decode(CreateUserRequest.self)
            try Validate.user(request)
            return .json(try store.createUser(request), status: 201)
        }
        router.add("POST", Endpoints.adminUsers + "/{uid}/tokens") { context in
            try requireAdmin(context)
            let request =
                context.request.body.isEmpty ? CreateTokenRequest() : try context.decode(CreateTokenRequest.self)
            if let ttl = request.ttlSeconds, !(1...(10 * 365 * 24 * 3600)).contains(ttl) {
                throw HTTPError.validation("`ttlSeconds` must be between 1 and 315360000")
            }
            return .json(
                try store.issueToken(for: context.parameter("uid"), ttlSeconds: request.ttlSeconds), status: 201)
        }
        // By the token or its hash in the body: never in the path, where proxies log it.
        router.add("POST", Endpoints.adminTokens + "/revoke") { context in
            try requireAdmin(context)
            let request = try context.decode(RevokeTokenRequest.self)
            guard let hash = request.tokenHash ?? request.token.map(Store.tokenHash),
                (request.token == nil) != (request.tokenHash == nil)
            else {
                throw HTTPError.validation("give exactly one of `token` and `tokenHash`")
            }
            guard try store.revoke(tokenHash: hash) else { throw HTTPError.notFound("no such token") }
            realtime.revoke(tokenHash: hash)
            return .noContent
        }
        router.add("POST", "/v1/admin/clock") { context in
            try requireAdmin(context)
            guard let clock else { throw HTTPError.notFound("start chatd with --test-clock to move its clock") }
            let request = try context.decode(AdvanceClockRequest.self)
            guard (0...315_360_000).contains(request.advanceSeconds) else {
                throw HTTPError.validation("`advanceSeconds` must be between 0 and 315360000")
            }
            clock.advance(by: request.advanceSeconds * 1000)
            return .json(["now": clock.now()])
        }
    }

    func addUsers(to router: inout Router) {
        // A user revokes the token they call with (the SDK's logout): its sockets close too.
        // Signing out is never refused by the rate limits (no bucket).
        signedIn(&router, "DELETE", Endpoints.meToken, bucket: nil) { context, _ in
            let hash = Store.tokenHash(context.request.bearerToken ?? "")
            _ = try store.revoke(tokenHash: hash)
            realtime.revoke(tokenHash: hash)
            return .noContent
        }
        signedIn(&router, "GET", Endpoints.me) { context, uid in
            guard let user = try store.user(uid, for: uid) else { throw HTTPError.notFound("no user \(uid)") }
            return .json(withStatus(user))
        }
        signedIn(&router, "GET", Endpoints.users) { context, uid in
            let limit = try limit(context)
            var filter = UserFilter()
            filter.searchKeyword = context.request.query["searchKeyword"].flatMap { $0.isEmpty ? nil : $0 }
            filter.tags = try Self.list(context.request.query["tags"], name: "tags")
            filter.roles = try Self.list(context.request.query["roles"], name: "roles")
            filter.online = try onlineFilter(context)
            if filter.online != nil { filter.onlineUids = try onlineUids(as: uid) }
            let users = try store.users(
                after: context.request.query["cursor"], limit: limit + 1, for: uid, filter: filter)
            return .json(Self.page(users.map(withStatus), limit: limit, key: \.uid))
        }
        signedIn(&router, "GET", Endpoints.users + "/{uid}") { context, uid in
            guard let user = try store.user(context.parameter("uid"), for: uid) else {
                throw HTTPError.notFound("no user \(context.parameter("uid"))")
            }
            return .json(withStatus(user))
        }
        signedIn(&router, "GET", Endpoints.blocks) { context, uid in
            let raw = context.request.query["direction"] ?? BlockDirection.blockedByMe.rawValue
            guard let direction = BlockDirection(rawValue: raw) else {
                throw HTTPError.badParameter("`direction` must be blockedByMe, hasBlockedMe or both")
            }
            let limit = try limit(context)
            let users = try store.blocks(
                of: uid, direction: direction, after: context.request.query["cursor"], limit: limit + 1)
            return .json(Self.page(users, limit: limit, key: \.uid))
        }
        for (method, blocking) in [("PUT", true), ("DELETE", false)] {
            signedIn(&router, method, Endpoints.blocks + "/{uid}") { context, uid in
                .json(try store.setBlock(context.parameter("uid"), by: uid, blocking: blocking))
            }
        }
    }

    func messageID(_ context: RouteContext) throws -> Int64 {
        guard let id = Int64(context.parameter("id")), id > 0 else {
            throw HTTPError.notFound("no message \(context.parameter("id"))")
        }
        return id
    }

    func addMessages(to router: inout Router) {
        signedIn(&router, "POST", Endpoints.messages) { context, uid in
            let request = try context.decode(SendMessageRequest.self)
            try Validate.send(request, from: uid, httpsMedia: allowHTTPSMedia)
            let (message, created) = try store.send(from: uid, request)
            return .json(message, status: created ? 201 : 200)
        }
        signedIn(&router, "GET", Endpoints.messages + "/{id}") { context, uid in
            return .json(try store.message(try messageID(context), for: uid))
        }
        signedIn(&router, "PATCH", Endpoints.messages + "/{id}") { context, uid in
            let request = try context.decode(EditMessageRequest.self)
            guard
                request.text != nil || request.customData != nil || request.metadata != nil || request.callStatus != nil
            else {
                throw HTTPError.validation("send at least one of `text`, `customData`, `metadata`, `callStatus`")
            }
            guard
                request.callStatus == nil
                    || (request.text == nil && request.customData == nil && request.metadata == nil)
            else {
                throw HTTPError.validation("change `callStatus` on its own")
            }
            try Validate.text(request.text, field: "text", max: 64 << 10, required: request.text != nil)
            try Validate.json(request.customData, field: "customData")
            try Validate.metadata(request.metadata)
            return .json(try store.edit(try messageID(context), by: uid, request))
        }
        signedIn(&router, "DELETE", Endpoints.messages + "/{id}") { context, uid in
            return .json(try store.delete(try messageID(context), by: uid))
        }
        signedIn(&router, "GET", Endpoints.messages + "/{id}/thread") { context, uid in
            return .json(
                try store.messages(
                    try messageQuery(context, scope: .thread(parentId: try messageID(context))), for: uid))
        }
        signedIn(&router, "POST", Endpoints.messages + "/{id}/reactions") { context, uid in
            let request = try context.decode(AddReactionRequest.self)
            try Validate.text(request.reaction, field: "reaction", max: 64, required: true)
            guard !request.reaction.contains("/") else { throw HTTPError.validation("`reaction` must not contain /") }
            let (message, added) = try store.react(request.reaction, to: try messageID(context), by: uid)
            return .json(message, status: added ? 201 : 200)
        }
        signedIn(&router, "DELETE", Endpoints.messages + "/{id}/reactions/{reaction}") { context, uid in
            return .json(try store.unreact(context.parameter("reaction"), from: try messageID(context), by: uid))
        }
        signedIn(&router, "GET", Endpoints.messages + "/{id}/reactions") { context, uid in
            let limit = try limit(context)
            let after = try context.intQuery("after", in: 0...Int64.max)
            let before = try context.intQuery("before", in: 1...Int64.max)
            guard before == nil || after == nil else {
                throw HTTPError.badParameter("give `before` or `after`, not both")
            }
            let reaction = context.request.query["reaction"].flatMap { $0.isEmpty ? nil : $0 }
            return .json(
                try store.reactions(
                    on: try messageID(context), for: uid, reaction: reaction,
                    after: after, before: before, limit: limit))
        }
    }

    func addConversations(to router: inout Router) {
        signedIn(&router, "GET", Endpoints.conversations) { context, uid in
            return .json(
                try store.conversations(for: uid, cursor: context.request.query["cursor"], limit: try limit(context)))
        }
        signedIn(&router, "GET", Endpoints.conversations + "/{id}") { context, uid in
            return .json(try store.conversation(context.parameter("id"), for: uid))
        }
        signedIn(&router, "GET", Endpoints.conversations + "/{id}/messages") { context, uid in
            return .json(
                try store.messages(try messageQuery(context, scope: .conversation(context.parameter("id"))), for: uid))
        }
        for kind in [ReceiptPayload.Kind.delivered, .read] {
            signedIn(&router, "POST", Endpoints.conversations + "/{id}/\(kind.rawValue)") { context, uid in
                let request = try context.decode(ReceiptRequest.self)
                return .json(try store.receipt(kind, by: uid, in: context.parameter("id"), upTo: request.messageId))
            }
        }
    }
}

extension Routes {
    /// The message list's query arguments (the `MessagesRequest` builder's filters).
    func messageQuery(_ context: RouteContext, scope: MessageQuery.Scope) throws -> MessageQuery {
        var query = MessageQuery(scope: scope)
        query.limit = try limit(context)
        query.beforeId = try context.intQuery("before", in: 1...Int64.max)
        query.afterId = try context.intQuery("after", in: 0...Int64.max)
        query.sentBefore = try context.intQuery("sentBefore", in: 1...Int64.max)
        query.sentAfter = try context.intQuery("sentAfter", in: 0...Int64.max)
        query.updatedAfter = try context.intQuery("updatedAfter", in: 0...Int64.max)
        let anchoredForward = query.afterId != nil || query.sentAfter != nil || query.updatedAfter != nil
        guard !(anchoredForward && (query.beforeId != nil || query.sentBefore != nil)) else {
            throw HTTPError.badParameter(
                "page one way: give `before`/`sentBefore` or `after`/`sentAfter`/`updatedAfter`, not both")
        }
        query.categories = try Self.list(context.request.query["categories"], name: "categories")
        query.types = try Self.list(context.request.query["types"], name: "types")
        query.hideReplies = try context.boolQuery("hideReplies")
        query.hideDeleted = try context.boolQuery("hideDeleted")
        query.hasLinks = try context.boolQuery("hasLinks")
        query.updatesOnly = try context.boolQuery("updatesOnly")
        guard !query.updatesOnly || query.updatedAfter != nil else {
            throw HTTPError.badParameter("`updatesOnly` needs `updatedAfter`")
        }
        query.searchKeyword = context.request.query["searchKeyword"].flatMap { $0.isEmpty ? nil : $0 }
        // `uid` (the `MessagesRequest` builder's name, one sender in a group) or `sender`.
        let senders = Set(["uid", "sender"].compactMap { context.request.query[$0] }.filter { !$0.isEmpty })
        guard senders.count <= 1 else { throw HTTPError.badParameter("`uid` and `sender` name different senders") }
        query.sender = senders.first
        return query
    }
}

/// `POST /v1/admin/clock` body (only with `chatd --test-clock`).
struct AdvanceClockRequest: Codable {
    var advanceSeconds: Int64
}

/// Compares secrets without an early exit that would leak the matching prefix's length.
func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
}
