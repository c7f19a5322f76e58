/// chatd's paths and headers, shared by server and SDK.
public enum Endpoints {
    /// chatd's version, as `GET /v1/health` reports it.
    public static let version = "0.1.0"
    /// `GET`: whether chatd can serve (`HealthResponse`); needs no token.
    public static let health = "/v1/health"
    /// `GET`: the caller's own user.
    public static let me = "/v1/me"
    /// `DELETE`: revokes the caller's own token.
    public static let meToken = "/v1/me/token"
    /// `GET` lists users (with filters); `GET /v1/users/{uid}` reads one.
    public static let users = "/v1/users"
    /// `POST` sends; `/{id}` reads, edits (`PATCH`) or deletes one; `/{id}/thread` and `/{id}/reactions`.
    public static let messages = "/v1/messages"
    /// `GET` the caller's conversation list; `/{id}`, `/{id}/messages`, and `/{id}/delivered` / `/read` receipts.
    public static let conversations = "/v1/conversations"
    /// `GET ?cursor=&limit=`: the caller's changelog (`ChangelogPage`).
    public static let changes = "/v1/changes"
    /// The caller's notification feed: mentions, replies and reactions, newest first.
    public static let notifications = "/v1/notifications"
    /// `GET` the caller's blocked users; `PUT` / `DELETE /v1/blocks/{uid}` to block / unblock.
    public static let blocks = "/v1/blocks"
    /// Groups, their members (`/{guid}/members`), bans (`/{guid}/bans`) and ownership (`/{guid}/owner`).
    public static let groups = "/v1/groups"
    /// `POST` uploads a file (raw bytes) and answers its `Attachment`; `GET /v1/media/{id}` fetches it.
    public static let media = "/v1/media"
    /// The realtime WebSocket (`RealtimeEnvelope` frames).
    public static let realtime = "/v1/realtime"
    /// Admin: `POST` creates a user; `POST /v1/admin/users/{uid}/tokens` issues a token;
    /// `PUT`/`DELETE /v1/admin/users/{uid}/suspension` suspends a user (every token revoked, no
    /// new one issued) or lifts it; `GET` searches users (`AdminUserPayload`), `GET /{uid}` one,
    /// `GET /{uid}/groups` their groups, `DELETE /{uid}/tokens` revokes every token of theirs.
    public static let adminUsers = "/v1/admin/users"
    /// Admin: `POST /v1/admin/tokens/revoke` revokes a token.
    public static let adminTokens = "/v1/admin/tokens"
    /// Admin: `GET` pages every group (private ones too), `POST` creates one for an owner
    /// (`AdminCreateGroupRequest`); under `/{guid}` the group's routes of `/v1/groups/{guid}`
    /// (members, bans, owner, deletion), done in the owner's name.
    public static let adminGroups = "/v1/admin/groups"
    /// Admin: `GET /v1/admin/conversations/{id}/messages` reads a conversation (recorded in the
    /// audit trail).
    public static let adminConversations = "/v1/admin/conversations"
    /// Admin: `DELETE /v1/admin/messages/{id}` deletes a message for everyone.
    public static let adminMessages = "/v1/admin/messages"
    /// Admin: `GET` pages the audit trail (`AuditEntry`), newest first.
    public static let adminAudit = "/v1/admin/audit"
    /// The admin API key travels in this header.
    public static let adminKeyHeader = "X-Admin-Key"

    /// 64 lowercase hex digits: the form of a media id (and of a media file's name).
    public static func isMediaID(_ id: some StringProtocol) -> Bool {
        id.utf8.count == 64 && id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The id in chatd's own media url (`/v1/media/<id>`), nil for any other url.
    public static func mediaID(in url: String) -> String? {
        guard url.hasPrefix(media + "/") else { return nil }
        let id = url.dropFirst(media.count + 1)
        return isMediaID(id) ? String(id) : nil
    }
}
