/// A user as chatd returns it.
public struct UserPayload: Codable, Sendable, Equatable {
    public var uid: String
    public var name: String
    public var avatar: String?
    public var metadata: [String: JSONValue]?
    public var tags: [String]
    public var role: String?
    /// Epoch seconds of the user's last authenticated request, nil if never.
    public var lastActiveAt: Int64?
    /// "online" while the user has a realtime connection, else "offline" (on user reads).
    public var status: String?
    /// Relative to the caller: the caller blocked this user (absent when false).
    public var blockedByMe: Bool?
    /// Relative to the caller: this user blocked the caller (absent when false).
    public var hasBlockedMe: Bool?

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
    public var uid: String
    public var name: String?
    public var avatar: String?
    public var metadata: [String: JSONValue]?
    public var tags: [String]?
    public var role: String?

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
    public init(ttlSeconds: Int64? = nil) { self.ttlSeconds = ttlSeconds }
}

/// A freshly issued auth token.
public struct TokenResponse: Codable, Sendable {
    public var uid: String
    public var authToken: String
    /// What chatd keeps of the token (its SHA-256, hex): enough to revoke it
    /// (`POST /v1/admin/tokens/revoke`), not to use it.
    public var tokenHash: String?
    /// Epoch seconds after which the token answers 401 `token_expired`.
    public var expiresAt: Int64
    public init(uid: String, authToken: String, expiresAt: Int64) {
        self.uid = uid
        self.authToken = authToken
        self.expiresAt = expiresAt
    }
}

/// A page of a list endpoint: the items and the opaque cursor of the next page (nil at the end).
public struct Page<Item: Codable & Sendable>: Codable, Sendable {
    public var items: [Item]
    public var next: String?
    public init(items: [Item], next: String?) {
        self.items = items
        self.next = next
    }
}

/// `GET /v1/health`.
/// `GET /v1/health`: 200 when chatd can serve, 503 (same shape) when it cannot (a load
/// balancer's check).
public struct HealthResponse: Codable, Sendable {
    /// `ok` or `unavailable`.
    public var status: String
    public var version: String
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
    public init(
        status: String, version: String, engine: String? = nil, database: String? = nil, bus: String? = nil,
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
    public var token: String?
    public var tokenHash: String?
    public init(token: String? = nil, tokenHash: String? = nil) {
        self.token = token
        self.tokenHash = tokenHash
    }
}
