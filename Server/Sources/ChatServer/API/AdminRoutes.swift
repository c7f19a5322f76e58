import Foundation
import OfflineChatProtocol

/// `/v1/admin`: users, tokens, the audit trail and the test clock, behind the admin key; and
/// `GET /metrics`. Each admin action that changes something is recorded once it succeeded
/// (`GET /v1/admin/audit`).
extension Routes {
    /// Whether the request carries the admin key (`X-Admin-Key`), compared in constant time.
    func isAdmin(_ context: RouteContext) -> Bool {
        context.request.header(Endpoints.adminKeyHeader).map { constantTimeEqual($0, adminKey) } ?? false
    }

    /// 401 unless the request carries the admin key.
    func requireAdmin(_ context: RouteContext) throws {
        guard isAdmin(context) else {
            let what = "\(context.request.method) \(context.request.path)"
            adminFailures.note { "warning: \($0) admin requests without the right key lately (the last: \(what))" }
            throw HTTPError(401, .unauthorized, "admin endpoints need the \(Endpoints.adminKeyHeader) header")
        }
    }

    /// Adds an operator's route: `handler` runs once the request carried the admin key (else 401).
    func admin(
        _ router: inout Router, _ method: String, _ pattern: String,
        _ handler: @escaping @Sendable (RouteContext) throws -> HTTPResponse
    ) {
        router.add(method, pattern) { context in
            try requireAdmin(context)
            return try handler(context)
        }
    }

    /// Names the node that answered (`X-Chatd-Node`): behind a proxy the console keeps each
    /// node's health and counters apart.
    func namingTheNode(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.append(("X-Chatd-Node", realtime.configuration.nodeID))
        return response
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

    func addAdmin(to router: inout Router) {
        admin(&router, "POST", Endpoints.adminUsers) { context in
            let request = try context.decode(CreateUserRequest.self)
            try Validate.user(request)
            let created = try store.createUser(request)
            try store.audit("user.create", target: created.uid)
            return .json(created, status: 201)
        }
        admin(&router, "POST", Endpoints.adminUsers + "/{uid}/tokens") { context in
            let request =
                context.request.body.isEmpty ? CreateTokenRequest() : try context.decode(CreateTokenRequest.self)
            if let ttl = request.ttlSeconds, !(1...(10 * 365 * 24 * 3600)).contains(ttl) {
                throw HTTPError.validation("`ttlSeconds` must be between 1 and 315360000")
            }
            let issued = try store.issueToken(for: context.parameter("uid"), ttlSeconds: request.ttlSeconds)
            try store.audit("token.issue", target: issued.uid)
            return .json(issued, status: 201)
        }
        admin(&router, "PUT", Endpoints.adminUsers + "/{uid}/suspension") { context in
            let uid = context.parameter("uid")
            let (since, revoked) = try store.suspend(uid)
            for hash in revoked { realtime.revoke(tokenHash: hash) }
            try store.audit("user.suspend", target: uid)
            return .json(SuspensionResponse(uid: uid, suspendedAt: since, revokedTokens: revoked.count))
        }
        admin(&router, "DELETE", Endpoints.adminUsers + "/{uid}/suspension") { context in
            let uid = context.parameter("uid")
            try store.unsuspend(uid)
            try store.audit("user.unsuspend", target: uid)
            return .noContent
        }
        // By the token or its hash in the body: never in the path, where proxies log it.
        admin(&router, "POST", Endpoints.adminTokens + "/revoke") { context in
            let request = try context.decode(RevokeTokenRequest.self)
            guard let hash = request.tokenHash ?? request.token.map(Store.tokenHash),
                (request.token == nil) != (request.tokenHash == nil)
            else {
                throw HTTPError.validation("give exactly one of `token` and `tokenHash`")
            }
            guard try store.revoke(tokenHash: hash) else { throw HTTPError.notFound("no such token") }
            realtime.revoke(tokenHash: hash)
            try store.audit("token.revoke", target: hash)
            return .noContent
        }
        admin(&router, "POST", "/v1/admin/clock") { context in
            guard let clock else { throw HTTPError.notFound("start chatd with --test-clock to move its clock") }
            let request = try context.decode(AdvanceClockRequest.self)
            guard (0...315_360_000).contains(request.advanceSeconds) else {
                throw HTTPError.validation("`advanceSeconds` must be between 0 and 315360000")
            }
            clock.advance(by: request.advanceSeconds * 1000)
            try store.audit("clock.advance", target: "\(request.advanceSeconds) s")
            return .json(["now": clock.now()])
        }
        admin(&router, "GET", Endpoints.adminAudit) { context in
            let limit = try limit(context)
            let before = try context.request.query["cursor"].map { raw in
                guard let id = Int64(raw), id > 0 else { throw HTTPError.badParameter("`cursor` is not one of ours") }
                return id
            }
            return .json(Self.page(try store.auditTrail(before: before, limit: limit + 1), limit: limit) { "\($0.id)" })
        }
    }
}

/// `POST /v1/admin/clock` body (only with `chatd --test-clock`).
struct AdvanceClockRequest: Codable {
    var advanceSeconds: Int64
}
