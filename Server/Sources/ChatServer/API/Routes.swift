import Foundation
import OfflineChatProtocol

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
    /// Admin requests refused for their key, logged a line at a time.
    var adminFailures = ThrottledLog()
    /// Health checks share one database probe at a time.
    var health = HealthProbe()
    /// Media downloads each user may have in flight.
    var downloads = DownloadSlots(perUser: 4)
    /// Bytes of uploads one user may hold; 0: no quota.
    let mediaQuota: Int64
    /// Attachments may name https urls elsewhere (`--allow-https-media`).
    var allowHTTPSMedia = false
    /// The realtime token may come as `?token=` (`--allow-query-token`).
    var allowQueryToken = false
    /// The operator console's files (`/admin`), nil when they are not installed.
    var console: ConsoleFiles?

    func router() -> Router {
        var router = Router()
        router.add("GET", Endpoints.health) { context in
            // One database probe at a time however many ask; what it found to anyone, the
            // version, engine, database, bus and node to the operator only.
            let reachable = health.isReachable(store)
            let status = reachable ? 200 : 503
            guard isAdmin(context) else {
                return namingTheNode(.json(HealthResponse(status: reachable ? "ok" : "unavailable"), status: status))
            }
            return namingTheNode(
                .json(
                    HealthResponse(
                        status: reachable ? "ok" : "unavailable", version: Endpoints.version,
                        engine: store.engineName, database: reachable ? "ok" : "unreachable",
                        bus: realtime.bus.map { $0.isConnected ? "ok" : "unreachable" },
                        node: realtime.bus.map { _ in realtime.configuration.nodeID }),
                    status: status))
        }
        router.add("GET", "/metrics") { context in
            // Prometheus sends the admin key as `Authorization: Bearer` (`authorization` in its scrape config).
            let bearerIsAdminKey = context.request.bearerToken.map { constantTimeEqual($0, adminKey) } ?? false
            if context.request.header(Endpoints.adminKeyHeader) != nil || !bearerIsAdminKey {
                try requireAdmin(context)
            }
            return namingTheNode(
                HTTPResponse(
                    status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                    body: Array(metrics.render(gauges: gauges()).utf8)))
        }
        addAdmin(to: &router)
        addAdminDirectory(to: &router)
        addConsole(to: &router)
        addUsers(to: &router)
        addMessages(to: &router)
        addConversations(to: &router)
        addGroups(to: &router)
        addGroupMembers(to: &router)
        addMedia(to: &router)
        signedIn(&router, "GET", Endpoints.changes) { context, uid in
            let limit =
                try context.intQuery("limit", in: 1...Int64(ChangelogPage.maxLimit)) ?? Int64(ChangelogPage.maxLimit)
            let page = try store.changes(
                for: uid, cursor: context.request.query["cursor"], limit: Int(limit),
                groupLogs: try context.boolQuery("groupLogs"))
            return .json(page.json)
        }
        // A read with its cursor in the body: no write bucket.
        signedIn(&router, "POST", Endpoints.changes, bucket: nil) { context, uid in
            let request = try context.decode(ChangesRequest.self)
            let limit = request.limit ?? ChangelogPage.maxLimit
            guard (1...ChangelogPage.maxLimit).contains(limit) else {
                throw HTTPError.validation("`limit` must be 1–\(ChangelogPage.maxLimit)")
            }
            try Validate.text(request.cursor, field: "cursor", max: Self.maxCursorBytes)
            let page = try store.changes(
                for: uid, cursor: request.cursor, limit: limit, groupLogs: request.groupLogs ?? false)
            return .json(page.json)
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
                    expiresAt: session.expiresAt, cursorFrames: try context.boolQuery("cursorFrames")))
        }
        return router
    }

    /// Adds a route for a signed-in caller: `handler` gets their uid (a missing, unknown or
    /// expired token is a 401 before it runs). A write (any method but GET and HEAD) also takes
    /// one from the caller's `bucket` of the rate limits.
    func signedIn(
        _ router: inout Router, _ method: String, _ pattern: String, bucket: RateLimiter.Kind? = .write,
        _ handler: @escaping @Sendable (RouteContext, String) throws -> HTTPResponse
    ) {
        router.add(method, pattern) { context in try handler(context, try authenticate(context, bucket: bucket)) }
    }

    /// The caller's uid from a bearer token, once the caller's `bucket` admits the request.
    /// Reads (GET, HEAD) take from no bucket; a route with a bucket of its own (joins,
    /// uploads) or none (signing out) says so.
    func authenticate(_ context: RouteContext, bucket: RateLimiter.Kind? = .write) throws -> String {
        let uid = try store.authenticate(token: context.request.bearerToken)
        if let bucket, !["GET", "HEAD"].contains(context.request.method) { try limits.admit(uid, bucket) }
        return uid
    }

    /// The longest cursor `POST /v1/changes` reads: a `c3` cursor of a user in a thousand groups
    /// with long guids is under it.
    static let maxCursorBytes = 131_072

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

    /// `limit=` (1…100), or `value` when absent.
    func limit(_ context: RouteContext, default value: Int = 30) throws -> Int {
        Int(try context.intQuery("limit", in: 1...100) ?? Int64(value))
    }
}

/// Compares secrets without an early exit that would leak the matching prefix's length.
func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
}
