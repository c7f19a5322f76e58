import Foundation

extension Connection {
    /// Adds PostgreSQL's `greatest(a, b, …)` and `least(a, b, …)`: the largest (smallest)
    /// argument, NULLs ignored, NULL when every argument is NULL. SQLite's two-argument
    /// `max(a, b)` returns NULL as soon as one is NULL and PostgreSQL has no such function, so
    /// SQL meant for both engines uses these.
    public func addGreatestAndLeast() throws {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        try check(sqlite3_create_function_v2(handle, "greatest", -1, flags, nil, greatestFunction, nil, nil, nil))
        try check(sqlite3_create_function_v2(handle, "least", -1, flags, nil, leastFunction, nil, nil, nil))
    }
}

private let greatestFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    pickArgument($0, $1, $2, larger: true)
}

private let leastFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    pickArgument($0, $1, $2, larger: false)
}

/// Returns the argument that orders last (or first) among the non-NULL ones, by SQLite's own
/// ordering for numbers (integers exactly, reals as doubles) and by bytes for everything else.
private func pickArgument(
    _ context: OpaquePointer?, _ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?,
    larger: Bool
) {
    guard let values else { return sqlite3_result_null(context) }
    var best: OpaquePointer?
    for index in 0..<Int(count) {
        guard let value = values[index], sqlite3_value_type(value) != SQLITE_NULL else { continue }
        guard let current = best else {
            best = value
            continue
        }
        let order = compare(value, current)
        if larger ? order > 0 : order < 0 { best = value }
    }
    if let best { sqlite3_result_value(context, best) } else { sqlite3_result_null(context) }
}

private func compare(_ a: OpaquePointer, _ b: OpaquePointer) -> Int {
    let (typeA, typeB) = (sqlite3_value_type(a), sqlite3_value_type(b))
    let numeric: (Int32) -> Bool = { $0 == SQLITE_INTEGER || $0 == SQLITE_FLOAT }
    if numeric(typeA) && numeric(typeB) {
        if typeA == SQLITE_INTEGER && typeB == SQLITE_INTEGER {
            let (x, y) = (sqlite3_value_int64(a), sqlite3_value_int64(b))
            return x < y ? -1 : (x > y ? 1 : 0)
        }
        let (x, y) = (sqlite3_value_double(a), sqlite3_value_double(b))
        return x < y ? -1 : (x > y ? 1 : 0)
    }
    if numeric(typeA) != numeric(typeB) { return numeric(typeA) ? -1 : 1 }  // numbers sort before text and blobs
    let (lengthA, lengthB) = (Int(sqlite3_value_bytes(a)), Int(sqlite3_value_bytes(b)))
    let (bytesA, bytesB) = (sqlite3_value_blob(a), sqlite3_value_blob(b))
    let common = min(lengthA, lengthB)
    if common > 0, let bytesA, let bytesB {
        let order = memcmp(bytesA, bytesB, common)
        if order != 0 { return Int(order) }
    }
    return lengthA - lengthB
}
