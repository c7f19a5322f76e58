/// The operator's view of a user (`GET /v1/admin/users`): the user with their presence, and
/// what only the operator sees.
public struct AdminUserPayload: Codable, Sendable, Equatable {
    /// The user, with `status` ("online" while a realtime socket of theirs is open).
    public var user: UserPayload
    /// Epoch milliseconds the user was created.
    public var createdAt: Int64
    /// Epoch milliseconds the user was suspended (`PUT …/suspension`), nil when they may sign in.
    public var suspendedAt: Int64?
    /// Tokens of theirs neither revoked nor expired.
    public var activeTokens: Int
    /// Creates a view with every field.
    public init(user: UserPayload, createdAt: Int64, suspendedAt: Int64?, activeTokens: Int) {
        (self.user, self.createdAt, self.suspendedAt, self.activeTokens) = (user, createdAt, suspendedAt, activeTokens)
    }
}

/// `DELETE /v1/admin/users/{uid}/tokens`: every token of the user revoked (their realtime
/// sockets closed); they may be issued new ones.
public struct RevokedTokensResponse: Codable, Sendable, Equatable {
    /// The user.
    public var uid: String
    /// Tokens this request revoked.
    public var revokedTokens: Int
    /// Creates a response with every field.
    public init(uid: String, revokedTokens: Int) {
        (self.uid, self.revokedTokens) = (uid, revokedTokens)
    }
}

/// `POST /v1/admin/groups` body: a group created for `owner`, as if they had created it.
public struct AdminCreateGroupRequest: Codable, Sendable {
    /// The user who will own the group.
    public var owner: String
    /// The group (as `POST /v1/groups` takes it).
    public var group: CreateGroupRequest
    /// Creates a request with every field.
    public init(owner: String, group: CreateGroupRequest) {
        (self.owner, self.group) = (owner, group)
    }
}

/// `PUT /v1/admin/users/{uid}/suspension`: the user is suspended (every token of theirs
/// revoked, their realtime sockets closed, no new token issued until `DELETE` lifts it).
public struct SuspensionResponse: Codable, Sendable, Equatable {
    /// The suspended user.
    public var uid: String
    /// Epoch milliseconds the suspension began (the first `PUT`'s time).
    public var suspendedAt: Int64
    /// Tokens this request revoked.
    public var revokedTokens: Int
    /// Creates a response with every field.
    public init(uid: String, suspendedAt: Int64, revokedTokens: Int) {
        (self.uid, self.suspendedAt, self.revokedTokens) = (uid, suspendedAt, revokedTokens)
    }
}

/// One admin action chatd performed (`GET /v1/admin/audit`): what, on what, when. Every
/// admin request that changes something writes one; a secret (a token) is never in it.
public struct AuditEntry: Codable, Sendable, Equatable {
    /// Its place in the trail (later actions have larger ids).
    public var id: Int64
    /// Epoch milliseconds.
    public var at: Int64
    /// `user.create`, `token.issue`, `token.revoke`, `token.revoke.all`, `user.suspend`,
    /// `user.unsuspend`, `clock.advance`, `group.create`, `group.delete`, `group.owner.transfer`,
    /// `group.member.add`, `group.member.scope`, `group.member.kick`, `group.ban`, `group.unban`,
    /// `messages.read` (a conversation the operator opened), `message.delete`; from chatd's admin
    /// commands on the data directory also `group.member.import` (its target `GUID: N added`).
    public var action: String
    /// What it acted on: a uid, a token's hash, a guid (with the member's uid, a transfer's new
    /// owner, or how many members an add listed), a conversation, a message id, the seconds the
    /// clock moved.
    public var target: String
    /// Creates an entry with every field.
    public init(id: Int64, at: Int64, action: String, target: String) {
        (self.id, self.at, self.action, self.target) = (id, at, action, target)
    }
}
