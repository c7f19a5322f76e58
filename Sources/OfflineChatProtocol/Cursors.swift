/// The changelog cursor: opaque to clients, parsed only by chatd.
///
/// `c2.<epoch>.<position>`: the user's position (their gapless change count) in the
/// deployment whose epoch is `epoch` (lower-case hex). `c1.<sequence>` is what chatd issued
/// before positions were per user: a global change sequence, still accepted.
public enum ChangelogCursor: Equatable, Sendable {
    /// `c2`: the user's position in the deployment whose epoch is `epoch`.
    case position(epoch: String, position: Int64)
    /// `c1`: a global change sequence, from before positions were per user.
    case legacy(sequence: Int64)

    /// The `c2` cursor of `position` in the deployment whose epoch is `epoch`.
    public static func encode(epoch: String, position: Int64) -> String { "c2.\(epoch).\(position)" }

    /// What `cursor` says, nil when it is not one chatd issues.
    public static func parse(_ cursor: String) -> ChangelogCursor? {
        let parts = cursor.split(separator: ".", omittingEmptySubsequences: false)
        switch (parts.first, parts.count) {
        case ("c1", 2):
            guard let sequence = Int64(parts[1]), sequence >= 0, parts[1].first != "+" else { return nil }
            return .legacy(sequence: sequence)
        case ("c2", 3):
            let epoch = parts[1]
            guard (1...16).contains(epoch.count), epoch.allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
                let position = Int64(parts[2]), position >= 0, parts[2].first != "+"
            else { return nil }
            return .position(epoch: String(epoch), position: position)
        default:
            return nil
        }
    }
}

/// The conversation list's page cursor, `<updatedAt>:<conversation id>`.
public enum ConversationListCursor {
    /// The cursor of the page that follows the conversation with this `updatedAt` and id.
    public static func encode(updatedAt: Int64, conversationId: String) -> String { "\(updatedAt):\(conversationId)" }

    /// The position in `cursor`, nil when it is not one chatd issues.
    public static func parse(_ cursor: String) -> (updatedAt: Int64, conversationId: String)? {
        guard let colon = cursor.firstIndex(of: ":"), let time = Int64(cursor[..<colon]) else { return nil }
        return (time, String(cursor[cursor.index(after: colon)...]))
    }
}
