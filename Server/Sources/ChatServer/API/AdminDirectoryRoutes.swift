import OfflineChatProtocol

/// The operator's view of users, groups and conversations under `/v1/admin` (what the console
/// at `/admin` shows): searches across everyone, a user's groups, revoking a user's tokens,
/// creating a group for an owner, reading a conversation and deleting a message for everyone.
/// Reads of messages and every change are recorded in the audit trail.
extension Routes {
    func addAdminDirectory(to router: inout Router) {
        admin(&router, "GET", Endpoints.adminUsers) { context in
            let limit = try limit(context)
            let users = try store.adminUsers(
                keyword: keyword(context), after: context.request.query["cursor"], limit: limit + 1)
            return .json(Self.page(users.map(withPresence), limit: limit, key: \.user.uid))
        }
        admin(&router, "GET", Endpoints.adminUsers + "/{uid}") { context in
            return .json(withPresence(try store.adminUser(context.parameter("uid"))))
        }
        admin(&router, "GET", Endpoints.adminUsers + "/{uid}/groups") { context in
            let uid = context.parameter("uid")
            _ = try store.adminUser(uid)
            let limit = try limit(context)
            var filter = GroupFilter()
            filter.joinedOnly = true
            let groups = try store.groups(
                for: uid, filter: filter, after: context.request.query["cursor"], limit: limit + 1)
            return .json(Self.page(groups, limit: limit, key: \.guid))
        }
        admin(&router, "DELETE", Endpoints.adminUsers + "/{uid}/tokens") { context in
            let uid = context.parameter("uid")
            let revoked = try store.revokeTokens(of: uid)
            for hash in revoked { realtime.revoke(tokenHash: hash) }
            try store.audit("token.revoke.all", target: uid)
            return .json(RevokedTokensResponse(uid: uid, revokedTokens: revoked.count))
        }
        admin(&router, "GET", Endpoints.adminGroups) { context in
            let limit = try limit(context)
            let groups = try store.adminGroups(
                keyword: keyword(context), after: context.request.query["cursor"], limit: limit + 1)
            return .json(Self.page(groups, limit: limit, key: \.guid))
        }
        admin(&router, "POST", Endpoints.adminGroups) { context in
            let request = try context.decode(AdminCreateGroupRequest.self)
            let group = request.group
            try Validate.uid(group.guid, field: "group.guid")
            try Validate.group(
                name: group.name, icon: group.icon, description: group.description,
                metadata: group.metadata, tags: group.tags, password: group.password)
            guard group.type != .password else {
                throw HTTPError.validation("create password groups as their owner (POST /v1/groups)")
            }
            _ = try store.adminUser(request.owner)
            _ = try store.createGroup(group, by: request.owner, passwordHash: nil)
            try store.audit("group.create", target: group.guid)
            return .json(try store.adminGroup(group.guid), status: 201)
        }
        admin(&router, "GET", Endpoints.adminConversations + "/{id}/messages") { context in
            let id = context.parameter("id")
            let page = try store.messages(
                try messageQuery(context, scope: .conversation(id)), for: try store.reader(of: id))
            try store.audit("messages.read", target: id)
            return .json(page)
        }
        admin(&router, "DELETE", Endpoints.adminMessages + "/{id}") { context in
            let id = try messageID(context)
            let deleted = try store.delete(id, by: try store.deleter(ofMessage: id))
            try store.audit("message.delete", target: "\(id)")
            return .json(deleted)
        }
    }

    /// `searchKeyword=`, nil when absent or empty.
    func keyword(_ context: RouteContext) -> String? {
        context.request.query["searchKeyword"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The operator's view with the user's presence on the cluster.
    private func withPresence(_ view: AdminUserPayload) -> AdminUserPayload {
        var view = view
        view.user.status = realtime.presence.isOnline(view.user.uid) ? "online" : "offline"
        return view
    }
}
