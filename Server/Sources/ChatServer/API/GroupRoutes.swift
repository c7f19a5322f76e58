import OfflineChatProtocol

/// `/v1/groups`: groups, membership, bans. Passwords are hashed and verified here, before
/// the store takes its write lock. The routes of one group (its members, bans, owner) are
/// also the operator's, under `/v1/admin/groups` (`groupRoute`).
extension Routes {
    /// Who acts on a group: a signed-in user, or the operator in the name of the group's owner.
    struct GroupActor {
        let uid: String
        let isOperator: Bool
    }

    /// Adds `handler` at `/v1/groups/{guid}<suffix>` for a signed-in user, and at
    /// `/v1/admin/groups/{guid}<suffix>` for the operator (the admin key), who acts as the
    /// group's owner: the owner outranks every member, so the operator may do anything the
    /// group's rules allow, and members see it done in the owner's name, as with `chatd group
    /// member add`. The operator's request is recorded as `audit` once it succeeded (target:
    /// the guid, the uid in the path, and what `detail` reads in the request).
    func groupRoute(
        _ router: inout Router, _ method: String, _ suffix: String, audit: String? = nil,
        detail: (@Sendable (RouteContext) -> String?)? = nil,
        _ handler: @escaping @Sendable (RouteContext, GroupActor) throws -> HTTPResponse
    ) {
        signedIn(&router, method, Endpoints.groups + "/{guid}" + suffix) { context, uid in
            try handler(context, GroupActor(uid: uid, isOperator: false))
        }
        admin(&router, method, Endpoints.adminGroups + "/{guid}" + suffix) { context in
            let guid = context.parameter("guid")
            let response = try handler(context, GroupActor(uid: try store.groupOwner(guid), isOperator: true))
            if let audit {
                let member = suffix.hasSuffix("{uid}") ? " " + context.parameter("uid") : ""
                let more = detail?(context).map { " " + $0 } ?? ""
                try store.audit(audit, target: guid + member + more)
            }
            return response
        }
    }

    /// `body` (a password hashed) in the caller's hashing budget and one of the process's slots.
    func hashing<T>(_ uid: String, _ body: () throws -> T) throws -> T {
        try limits.admit(uid, .passwordHash)
        return try PasswordHash.slots.run(body)
    }

    func addGroups(to router: inout Router) {
        signedIn(&router, "POST", Endpoints.groups) { context, uid in
            let request = try context.decode(CreateGroupRequest.self)
            try Validate.uid(request.guid, field: "guid")
            try Validate.group(
                name: request.name, icon: request.icon, description: request.description,
                metadata: request.metadata, tags: request.tags, password: request.password)
            guard (request.type == .password) == (request.password != nil) else {
                throw HTTPError.validation(
                    request.type == .password
                        ? "a password group needs a `password`"
                        : "`password` is only for password groups")
            }
            let hash = try request.password.map { password in try hashing(uid) { try PasswordHash.make(password) } }
            return .json(try store.createGroup(request, by: uid, passwordHash: hash), status: 201)
        }
        signedIn(&router, "GET", Endpoints.groups) { context, uid in
            let limit = try limit(context)
            var filter = GroupFilter()
            filter.searchKeyword = keyword(context)
            filter.tags = try Self.list(context.request.query["tags"], name: "tags")
            filter.joinedOnly = try context.boolQuery("joinedOnly")
            let groups = try store.groups(
                for: uid, filter: filter, after: context.request.query["cursor"], limit: limit + 1)
            return .json(Self.page(groups, limit: limit, key: \.guid))
        }
        groupRoute(&router, "GET", "") { context, actor in
            let guid = context.parameter("guid")
            return .json(actor.isOperator ? try store.adminGroup(guid) : try store.group(guid, for: actor.uid))
        }
        signedIn(&router, "PATCH", Endpoints.groups + "/{guid}") { context, uid in
            let request = try context.decode(EditGroupRequest.self)
            try Validate.group(
                name: request.name, icon: request.icon, description: request.description,
                metadata: request.metadata, tags: request.tags, password: request.password)
            if request.password != nil { try store.requireScope(context.parameter("guid"), uid, for: .edit) }
            let hash = try request.password.map { password in try hashing(uid) { try PasswordHash.make(password) } }
            return .json(try store.editGroup(context.parameter("guid"), by: uid, request, passwordHash: hash))
        }
        groupRoute(&router, "DELETE", "", audit: "group.delete") { context, actor in
            try store.deleteGroup(context.parameter("guid"), by: actor.uid)
            return .noContent
        }
        signedIn(&router, "POST", Endpoints.groups + "/{guid}/join", bucket: .join) { context, uid in
            let request = context.request.body.isEmpty ? JoinGroupRequest() : try context.decode(JoinGroupRequest.self)
            let guid = context.parameter("guid")
            let (current, stored) = try store.joinCheck(guid, uid: uid)
            if current.hasJoined { return .json(current) }
            if let stored {
                try limits.admit(uid, .passwordHash)  // before the attempt is taken: a refusal costs none
                try store.takeJoinAttempt(uid, guid)
                guard let password = request.password,
                    try PasswordHash.slots.run({ PasswordHash.verify(password, against: stored) })
                else {
                    throw HTTPError.forbidden("wrong password for group \(guid)")
                }
                try store.clearJoinAttempts(uid, guid)
            }
            let verified = stored
            let (group, joined) = try store.join(guid, uid: uid, verifiedHash: verified)
            return .json(group, status: joined ? 201 : 200)
        }
        signedIn(&router, "POST", Endpoints.groups + "/{guid}/leave") { context, uid in
            try store.leave(context.parameter("guid"), uid: uid)
            return .noContent
        }
        groupRoute(&router, "POST", "/owner", audit: "group.owner.transfer", detail: Self.newOwner) { context, actor in
            let request = try context.decode(TransferOwnershipRequest.self)
            return .json(try store.transferOwnership(context.parameter("guid"), to: request.uid, by: actor.uid))
        }
    }

    func addGroupMembers(to router: inout Router) {
        groupRoute(&router, "GET", "/members") { context, actor in
            let limit = try limit(context)
            var filter = MemberFilter()
            filter.searchKeyword = keyword(context)
            filter.scopes = try Self.list(context.request.query["scopes"], name: "scopes").map { raw in
                guard let scope = GroupScope(rawValue: raw) else {
                    throw HTTPError.badParameter("`scopes` lists owner, admin, moderator or participant")
                }
                return scope
            }
            filter.online = try onlineFilter(context)
            if filter.online != nil {
                filter.onlineUids = actor.isOperator ? realtime.presence.online : try onlineUids(as: actor.uid)
            }
            let found = try store.members(
                of: context.parameter("guid"), for: actor.uid, filter: filter,
                after: context.request.query["cursor"], limit: limit + 1)
            return .json(
                Self.page(
                    found.map { member in
                        var member = member
                        member.user = withStatus(member.user)
                        return member
                    }, limit: limit, key: \.user.uid))
        }
        // One user (`AddMemberRequest`: the member, 201 or 200) or many (`AddMembersRequest`:
        // an outcome each, 200).
        groupRoute(&router, "POST", "/members", audit: "group.member.add", detail: Self.membersListed) {
            context, actor in
            let body = try context.decode(AddMembersBody.self)
            if let many = body.members {
                guard body.uid == nil else {
                    throw HTTPError.validation("send `uid` for one member or `members` for many, not both")
                }
                for request in many { try Validate.uid(request.uid, field: "members[].uid") }
                return .json(
                    AddMembersResponse(members: try store.addMembers(context.parameter("guid"), many, by: actor.uid)))
            }
            guard let member = body.uid else { throw HTTPError.validation("`uid` (or `members`) is required") }
            try Validate.uid(member)
            let (added, isNew) = try store.addMember(
                context.parameter("guid"), member, scope: body.scope ?? .participant, by: actor.uid)
            return .json(added, status: isNew ? 201 : 200)
        }
        groupRoute(&router, "PATCH", "/members/{uid}", audit: "group.member.scope") { context, actor in
            let request = try context.decode(ChangeScopeRequest.self)
            return .json(
                try store.changeScope(
                    context.parameter("guid"), context.parameter("uid"), to: request.scope, by: actor.uid))
        }
        groupRoute(&router, "DELETE", "/members/{uid}", audit: "group.member.kick") { context, actor in
            try store.kick(context.parameter("guid"), context.parameter("uid"), by: actor.uid)
            return .noContent
        }
        groupRoute(&router, "GET", "/bans") { context, actor in
            let limit = try limit(context)
            let found = try store.bans(
                of: context.parameter("guid"), for: actor.uid, after: context.request.query["cursor"],
                limit: limit + 1)
            return .json(Self.page(found, limit: limit, key: \.user.uid))
        }
        groupRoute(&router, "PUT", "/bans/{uid}", audit: "group.ban") { context, actor in
            return .json(try store.ban(context.parameter("guid"), context.parameter("uid"), by: actor.uid))
        }
        groupRoute(&router, "DELETE", "/bans/{uid}", audit: "group.unban") { context, actor in
            try store.unban(context.parameter("guid"), context.parameter("uid"), by: actor.uid)
            return .noContent
        }
    }
}

extension Routes {
    /// The audit detail of an ownership transfer: the new owner.
    static func newOwner(_ context: RouteContext) -> String? {
        (try? context.decode(TransferOwnershipRequest.self)).map { "to \($0.uid)" }
    }

    /// The audit detail of an add: the one uid, or how many were listed.
    static func membersListed(_ context: RouteContext) -> String? {
        (try? context.decode(AddMembersBody.self)).map { body in
            body.members.map { "(\($0.count) listed)" } ?? body.uid ?? ""
        }
    }
}

/// The body of `POST /v1/groups/{guid}/members`: one member's fields, or `members`.
private struct AddMembersBody: Decodable {
    var uid: String?
    var scope: GroupScope?
    var members: [AddMemberRequest]?
}
