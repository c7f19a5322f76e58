import Foundation
import OfflineChatProtocol

/// `chatd group member import GUID FILE [--scope S]`: many members added at once, on the data
/// directory or database, as the group's owner (the operator's way to fill a large group;
/// `POST /v1/groups/{guid}/members` with `members` is the API's).
///
/// FILE (`-` for standard input) has a uid a line, optionally followed by `,` and a scope;
/// blank lines and lines starting with `#` are skipped. The whole file is checked first: a
/// line that is not a uid or a scope is reported with its number and nothing is added. Then
/// the members are added 1,000 a call (a group's sends wait for one call, not the whole file);
/// a user who cannot be added (unknown, banned) does not stop the others, and is listed.
enum GroupMemberImport {
    /// The members `text` names, each with its line's scope or `scope`.
    static func parse(_ text: String, scope: GroupScope) throws -> [AddMemberRequest] {
        var members: [AddMemberRequest] = []
        var problems: [String] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let fields = line.split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            do {
                try Validate.uid(fields[0])
                guard let given = fields.count > 1 ? GroupScope(rawValue: fields[1]) : scope, given != .owner else {
                    throw UsageError(description: "the scope must be participant, moderator or admin")
                }
                members.append(AddMemberRequest(uid: fields[0], scope: given))
            } catch {
                problems.append("line \(index + 1) (\(line.prefix(40))): \(error)")
            }
        }
        guard problems.isEmpty else {
            throw UsageError(description: "nothing added; fix these lines first:" + listing(problems))
        }
        return members
    }

    /// Adds `members` to `guid` as its owner, 1,000 a call; what to print. Throws (after adding
    /// the others) when some could not be added, naming them.
    static func run(_ members: [AddMemberRequest], to guid: String, in store: Store) throws -> String {
        let owner = try store.groupOwner(guid)
        var (added, already) = (0, 0)
        var failed: [String] = []
        for start in stride(from: 0, to: members.count, by: AddMembersRequest.maxCount) {
            let chunk = Array(members[start..<min(members.count, start + AddMembersRequest.maxCount)])
            for outcome in try store.addMembers(guid, chunk, by: owner) {
                switch outcome.status {
                case .added: added += 1
                case .member: already += 1
                case .failed:
                    failed.append(
                        "\(outcome.uid) (\(outcome.error.map { "\($0.code.rawValue): \($0.message)" } ?? "?"))")
                }
            }
        }
        let summary = "added \(added) to \(guid) (\(already) already members)"
        if added > 0 { try store.audit("group.member.import", target: "\(guid): \(added) added") }
        guard failed.isEmpty else {
            throw UsageError(description: "\(summary); \(failed.count) not added:" + listing(failed))
        }
        return summary
    }

    /// The first 20 of `items`, a line each, and how many more there are.
    static func listing(_ items: [String]) -> String {
        let more = items.count > 20 ? "\n  … and \(items.count - 20) more" : ""
        return "\n  " + items.prefix(20).joined(separator: "\n  ") + more
    }
}
