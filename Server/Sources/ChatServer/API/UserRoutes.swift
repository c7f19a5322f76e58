import Foundation
import OfflineChatProtocol

/// `/v1/me`, `/v1/users` and `/v1/blocks`: the caller, other users with their presence, blocks.
extension Routes {
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
            filter.searchKeyword = keyword(context)
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
}
