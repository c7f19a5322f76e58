/// A user as chatd returns it.
public struct UserPayload: Codable, Sendable, Equatable {
    /// The user's id.
    public var uid: String
    /// The display name.
    public var name: String
    /// The user's avatar, a string chatd stores as given.
    public var avatar: String?
    /// Free-form JSON kept with the user.
    public var metadata: [String: JSONValue]?
    /// Labels; `GET /v1/users?tags=` finds the users with any of them.
    public var tags: [String]
    /// A role of the app's choosing; `GET /v1/users?roles=` filters by it.
    public var role: String?
    /// Epoch seconds of the user's last authenticated request, nil if never.
    public var lastActiveAt: Int64?
    /// "online" while the user has a realtime connection, else "offline" (on user reads).
    public var status: String?
    /// Relative to the caller: the caller blocked this user (absent when false).
    public var blockedByMe: Bool?
    /// Relative to the caller: this user blocked the caller (absent when false).
    public var hasBlockedMe: Bool?

    /// Creates a user; the fields relative to a caller (`status`, blocks) stay nil.
    public init(
        uid: String, name: String, avatar: String? = nil, metadata: [String: JSONValue]? = nil,
        tags: [String] = [], role: String? = nil, lastActiveAt: Int64? = nil
    ) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.metadata = metadata
        self.tags = tags
        self.role = role
        self.lastActiveAt = lastActiveAt
    }
}

/// `POST /v1/admin/users` body. `name` defaults to the uid.
public struct CreateUserRequest: Codable, Sendable {
    /// The new user's id: 1 to 100 letters, digits or `_ . @ -`, not taken.
    public var uid: String
    /// The display name (up to 255 characters); defaults to the uid.
    public var name: String?
    /// The user's avatar, stored as given (up to 2048 characters).
    public var avatar: String?
    /// Free-form JSON kept with the user.
    public var metadata: [String: JSONValue]?
    /// Labels to find the user by (each up to 64 characters).
    public var tags: [String]?
    /// A role of the app's choosing (up to 64 characters).
    public var role: String?

    /// Creates a request with every field.
    public init(
        uid: String, name: String? = nil, avatar: String? = nil,
        metadata: [String: JSONValue]? = nil, tags: [String]? = nil, role: String? = nil
    ) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.metadata = metadata
        self.tags = tags
        self.role = role
    }
}

/// `POST /v1/admin/users/{uid}/tokens` body.
public struct CreateTokenRequest: Codable, Sendable {
    /// Lifetime in seconds (default 30 days).
    public var ttlSeconds: Int64?
    /// Creates a request; nil `ttlSeconds` gives the default lifetime.
    public init(ttlSeconds: Int64? = nil) { self.ttlSeconds = ttlSeconds }
}

/// A freshly issued auth token.
public struct TokenResponse: Codable, Sendable {
    /// The user the token signs in.
    public var uid: String
    /// The token, sent as `Authorization: Bearer <authToken>`; chatd does not keep it.
    public var authToken: String
    /// What chatd keeps of the token (its SHA-256, hex): enough to revoke it
    /// (`POST /v1/admin/tokens/revoke`), not to use it.
    public var tokenHash: String?
    /// Epoch seconds after which the token answers 401 `token_expired`.
    public var expiresAt: Int64
    /// Creates a response with every field but `tokenHash`.
    public init(uid: String, authToken: String, expiresAt: Int64) {
        self.uid = uid
        self.authToken = authToken
        self.expiresAt = expiresAt
    }
}

/// A page of a list endpoint: the items and the opaque cursor of the next page (nil at the end).
public struct Page<Item: Codable & Sendable>: Codable, Sendable {
    /// This page's items.
    public var items: [Item]
    /// The cursor of the next page, nil on the last.
    public var next: String?
    /// Creates a page with every field.
    public init(items: [Item], next: String?) {
        self.items = items
        self.next = next
    }
}

/// `GET /v1/health`: 200 when chatd can serve, 503 (same shape) when it cannot (a load
/// balancer's check). Anyone gets `status`; the rest only with the admin key.
public struct HealthResponse: Codable, Sendable {
    /// `ok` or `unavailable`.
    public var status: String
    /// chatd's version (`Endpoints.version`); with the admin key only.
    public var version: String?
    /// Where chatd keeps its data: `sqlite` or `postgresql`.
    public var engine: String?
    /// `ok` or `unreachable`.
    public var database: String?
    /// With several nodes, the bus between them: `ok` or `unreachable` (chatd still serves:
    /// sockets catch up from the database until it is back).
    public var bus: String?
    /// With several nodes, which one answered (`--node-id`): a load balancer's operator sees
    /// where requests land.
    public var node: String?
    /// Creates a response with every field.
    public init(
        status: String, version: String? = nil, engine: String? = nil, database: String? = nil, bus: String? = nil,
        node: String? = nil
    ) {
        self.status = status
        self.version = version
        self.engine = engine
        self.database = database
        self.bus = bus
        self.node = node
    }
}

/// `POST /v1/admin/tokens/revoke` body: exactly one of the token and its `tokenHash`.
public struct RevokeTokenRequest: Codable, Sendable {
    /// The token itself.
    public var token: String?
    /// The token's `tokenHash`, as issued with it.
    public var tokenHash: String?
    /// Creates a request; give exactly one of the two.
    public init(token: String? = nil, tokenHash: String? = nil) {
        self.token = token
        self.tokenHash = tokenHash
    }
}
