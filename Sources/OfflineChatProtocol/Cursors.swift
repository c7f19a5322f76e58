/// The changelog cursor: opaque to clients, parsed only by chatd.
///
/// `c3.<epoch>.<position>.<guid>:<pts>,…`: the user's position in their own log and their
/// position in the log of each group they read (docs/GROUPS.md), the groups in guid order so
/// that one place has one text. `c2.<epoch>.<position>`: the user's position (their gapless
/// change count) in the deployment whose epoch is `epoch` (lower-case hex), from when every
/// group change was copied to each member. `c1.<sequence>` is what chatd issued before
/// positions were per user: a global change sequence, still accepted.
public enum ChangelogCursor: Equatable, Sendable {
    /// `c3`: the user's position in their log and in each group's (by guid).
    case logs(epoch: String, position: Int64, groups: [String: Int64])
    /// `c2`: the user's position in the deployment whose epoch is `epoch`.
    case position(epoch: String, position: Int64)
    /// `c1`: a global change sequence, from before positions were per user.
    case legacy(sequence: Int64)

    /// The `c2` cursor of `position` in the deployment whose epoch is `epoch`.
    public static func encode(epoch: String, position: Int64) -> String { "c2.\(epoch).\(position)" }

    /// The `c3` cursor of these positions.
    public static func encode(epoch: String, position: Int64, groups: [String: Int64]) -> String {
        "c3.\(epoch).\(position)."
            + groups.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }

    /// What `cursor` says, nil when it is not one chatd issues.
    public static func parse(_ cursor: String) -> ChangelogCursor? {
        let parts = cursor.split(separator: ".", maxSplits: 3, omittingEmptySubsequences: false)
        switch (parts.first, parts.count) {
        case ("c1", 2):
            guard let sequence = count(parts[1]) else { return nil }
            return .legacy(sequence: sequence)
        case ("c2", 3):
            guard let epoch = epoch(parts[1]), let position = count(parts[2]) else { return nil }
            return .position(epoch: epoch, position: position)
        case ("c3", 4):
            guard let epoch = epoch(parts[1]), let position = count(parts[2]) else { return nil }
            var groups: [String: Int64] = [:]
            var previous = ""
            for entry in parts[3].split(separator: ",", omittingEmptySubsequences: false) where !parts[3].isEmpty {
                let pair = entry.split(separator: ":", omittingEmptySubsequences: false)
                guard pair.count == 2, !pair[0].isEmpty, String(pair[0]) > previous, let pts = count(pair[1]) else {
                    return nil
                }
                previous = String(pair[0])
                groups[previous] = pts
            }
            return .logs(epoch: epoch, position: position, groups: groups)
        default:
            return nil
        }
    }

    /// A deployment's epoch: 1–16 lower-case hex digits.
    private static func epoch(_ text: Substring) -> String? {
        guard (1...16).contains(text.count), text.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        return String(text)
    }

    /// A position or sequence: decimal digits only.
    private static func count(_ text: Substring) -> Int64? {
        guard let value = Int64(text), value >= 0, text.first != "+" else { return nil }
        return value
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
