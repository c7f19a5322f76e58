import OfflineChatSQLite

/// A WHERE clause built from the list builders' filters, with its arguments in order.
struct SQLConditions {
    private(set) var conditions: [String] = []
    private(set) var arguments: [any SQLValueConvertible] = []

    mutating func add(_ condition: String, _ values: [any SQLValueConvertible] = []) {
        conditions.append(condition)
        arguments += values
    }

    /// A case-insensitive substring of any of `columns` (`%` and `_` match themselves).
    mutating func keyword(_ keyword: String?, in columns: [String]) {
        guard let keyword else { return }
        let pattern = "%" + MessageQuery.escapeLike(keyword) + "%"
        add(
            "(" + columns.map { "\($0) LIKE ? ESCAPE '\\'" }.joined(separator: " OR ") + ")",
            Array(repeating: pattern, count: columns.count))
    }

    /// `column` is one of `values` (no condition when empty). The list is bound as one JSON
    /// array, so the SQL text is the same whatever its length (one cached statement, not one
    /// per list length).
    mutating func oneOf(_ column: String, _ values: [String]) throws {
        guard !values.isEmpty else { return }
        add("\(column) IN (SELECT value FROM json_each(?))", [try Store.json(values) ?? "[]"])
    }

    /// Any of `tags` in the JSON array `column` (no condition when empty), bound as one JSON array.
    mutating func anyTag(_ tags: [String], in column: String) throws {
        guard !tags.isEmpty else { return }
        add(
            "EXISTS (SELECT 1 FROM json_each(\(column)) WHERE value IN (SELECT value FROM json_each(?)))",
            [try Store.json(tags) ?? "[]"])
    }

    /// `column` in (or, with `online == false`, not in) `onlineUids`, bound as one JSON array.
    mutating func presence(_ online: Bool?, _ onlineUids: Set<String>?, column: String) throws {
        guard let online, let onlineUids else { return }
        add(
            "\(column) \(online ? "IN" : "NOT IN") (SELECT value FROM json_each(?))",
            [try Store.json(onlineUids.sorted()) ?? "[]"])
    }

    var clause: String { conditions.joined(separator: " AND ") }
}
