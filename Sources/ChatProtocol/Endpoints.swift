/// chatd's paths and headers, shared by server and SDK.
public enum Endpoints {
    public static let version = "0.1.0"
    public static let health = "/v1/health"
    public static let me = "/v1/me"
    /// `DELETE`: revokes the caller's own token.
    public static let meToken = "/v1/me/token"
    public static let users = "/v1/users"
    public static let messages = "/v1/messages"
    public static let conversations = "/v1/conversations"
    public static let changes = "/v1/changes"
    /// The caller's notification feed: mentions, replies and reactions, newest first.
    public static let notifications = "/v1/notifications"
    /// `GET` the caller's blocked users; `PUT` / `DELETE /v1/blocks/{uid}` to block / unblock.
    public static let blocks = "/v1/blocks"
    /// Groups, their members (`/{guid}/members`), bans (`/{guid}/bans`) and ownership (`/{guid}/owner`).
    public static let groups = "/v1/groups"
    /// `POST` uploads a file (raw bytes) and answers its `Attachment`; `GET /v1/media/{id}` fetches it.
    public static let media = "/v1/media"
    public static let realtime = "/v1/realtime"
    public static let adminUsers = "/v1/admin/users"
    public static let adminTokens = "/v1/admin/tokens"
    /// The admin API key travels in this header.
    public static let adminKeyHeader = "X-Admin-Key"
}
