import CLibPQ
import Foundation
import OfflineChatSQLite

/// What PostgreSQL refused, with its SQLSTATE (`40001` serialization failure, `23505` unique
/// violation, `08…` connection trouble, …).
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    public let sqlState: String
    public let message: String

    /// The transaction lost a race (serialization failure, deadlock): run it again.
    public var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// The connection is gone or the server is going away: the pool drops it.
    public var isConnectionLost: Bool {
        sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") || sqlState.isEmpty
    }

    public var description: String { "PostgreSQL \(sqlState.isEmpty ? "connection" : sqlState): \(message)" }
}

/// One libpq connection speaking the store's SQL (`SQLDatabase`). Statements are prepared once
/// per connection and run with text parameters whose types PostgreSQL infers; results come
/// back as `Row`s (integers, reals, text, bytea as blobs, booleans as 0/1). Not thread-safe:
/// one thread at a time, as the pool hands it out.
///
/// A transaction's `BEGIN` and the statements given to `runLater` wait in `queued` and go out
/// in one pipeline (libpq's pipeline mode) with the next statement whose answer is needed, or
/// with the `COMMIT`: one round trip instead of several. Their errors surface there.
public final class PostgresConnection: SQLDatabase {
    let handle: OpaquePointer
    private var prepared: [String: String] = [:]
    public private(set) var changes = 0
    private var queued: [Statement] = []

    /// A statement waiting for the next round trip: a prepared one (`name`) with its
    /// parameters as text, or plain SQL without parameters (`name` nil).
    private struct Statement {
        let sql: String
        let name: String?
        let texts: [String?]
    }

    /// Connects to `url` (`postgres://user@host:port/database?…`).
    public init(url: String) throws {
        guard let handle = PQconnectdb(url) else {
            throw PostgresError(sqlState: "", message: "libpq could not allocate a connection")
        }
        self.handle = handle
        guard PQstatus(handle) == CONNECTION_OK else {
            // Thrown once fully initialized: deinit still runs and finishes the handle.
            throw PostgresError(sqlState: "08001", message: Self.errorText(handle))
        }
    }

    deinit { PQfinish(handle) }

    /// False once the server closed the connection or it broke.
    public var isOpen: Bool { PQstatus(handle) == CONNECTION_OK }

    public func execute(_ sql: String) throws {
        try flush()
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, sql: sql)
    }

    public func run(_ sql: String, _ arguments: [any SQLValueConvertible]) throws {
        let result = try exec(sql, arguments)
        PQclear(result)
    }

    /// Queues the statement for the next round trip (see the type's comment).
    public func runLater(_ sql: String, _ arguments: [any SQLValueConvertible]) throws {
        queued.append(
            Statement(sql: sql, name: try statementName(sql), texts: arguments.map { Self.text($0.sqlValue) }))
    }

    /// Starts a transaction with `sql` (`BEGIN …`), sent with the transaction's first statement.
    func begin(_ sql: String) {
        queued.append(Statement(sql: sql, name: nil, texts: []))
    }

    /// Sends what is queued, if anything.
    private func flush() throws {
        if !queued.isEmpty { _ = try send([]) }
    }

    /// Sends what is queued and `COMMIT` in one round trip.
    func commit() throws {
        PQclear(try send([Statement(sql: "COMMIT", name: nil, texts: [])])[0])
    }

    /// Runs the statements in one round trip (with what is queued) and returns their rows.
    public func queries(_ statements: [(sql: String, arguments: [any SQLValueConvertible])]) throws -> [[Row]] {
        let results = try send(try statements.map { try statement($0.sql, $0.arguments) })
        defer { results.forEach { PQclear($0) } }
        return results.map { Self.rows($0) }
    }

    /// Drops what is queued and rolls back whatever reached the server.
    func rollback() {
        queued.removeAll()
        guard isOpen, PQtransactionStatus(handle) != PQTRANS_IDLE else { return }
        PQclear(PQexec(handle, "ROLLBACK"))
    }

    public func query(_ sql: String, _ arguments: [any SQLValueConvertible]) throws -> [Row] {
        let result = try exec(sql, arguments)
        defer { PQclear(result) }
        return Self.rows(result)
    }

    /// libpq holds the whole result; only its first row becomes a `Row`.
    public func queryFirst(_ sql: String, _ arguments: [any SQLValueConvertible]) throws -> Row? {
        let result = try exec(sql, arguments)
        defer { PQclear(result) }
        return Self.rows(result, limit: 1).first
    }

    public func lockRows(_ table: String, where column: String, is value: String) throws {
        try run("SELECT 1 FROM \(table) WHERE \(column) = ? FOR UPDATE", [value])
    }

    /// Prepares `sql` (translated) on first use, runs it with `arguments` as text.
    private func exec(_ sql: String, _ arguments: [any SQLValueConvertible]) throws -> OpaquePointer? {
        let result = try send([try statement(sql, arguments)])[0]
        changes = Int(String(cString: PQcmdTuples(result))) ?? 0
        return result
    }

    private func statement(_ sql: String, _ arguments: [any SQLValueConvertible]) throws -> Statement {
        Statement(sql: sql, name: try statementName(sql), texts: arguments.map { Self.text($0.sqlValue) })
    }

    /// Runs what is queued, then `statements`, in one round trip, and returns the results of
    /// `statements` (the caller clears them). The first statement that fails throws; the
    /// server skipped the rest.
    private func send(_ statements: [Statement]) throws -> [OpaquePointer?] {
        if queued.isEmpty, statements.count == 1, let only = statements.first {
            let result =
                only.name.map { name in
                    Self.withCStrings(only.texts) { PQexecPrepared(handle, name, Int32($0.count), $0, nil, nil, 0) }
                } ?? PQexec(handle, only.sql)
            return [try checked(result, sql: only.sql)]
        }
        let all = queued + statements
        queued.removeAll()
        guard PQenterPipelineMode(handle) == 1 else { throw connectionError("entering pipeline mode") }
        defer { PQexitPipelineMode(handle) }
        for statement in all {
            let sent =
                statement.name.map { name in
                    Self.withCStrings(statement.texts) {
                        PQsendQueryPrepared(handle, name, Int32($0.count), $0, nil, nil, 0)
                    }
                } ?? PQsendQueryParams(handle, statement.sql, 0, nil, nil, nil, nil, 0)
            guard sent == 1 else { throw connectionError("sending `\(statement.sql.prefix(200))`") }
        }
        guard PQpipelineSync(handle) == 1 else { throw connectionError("ending a pipeline") }
        var failure: (any Error)?
        var answers: [OpaquePointer?] = []
        for (index, statement) in all.enumerated() {
            guard let result = PQgetResult(handle) else {
                throw connectionError("reading `\(statement.sql.prefix(200))`")
            }
            while let end = PQgetResult(handle) { PQclear(end) }  // nil ends each statement's results
            if failure != nil {  // skipped by the server (PGRES_PIPELINE_ABORTED)
                PQclear(result)
                continue
            }
            do {
                let succeeded = try checked(result, sql: statement.sql)
                if index >= all.count - statements.count { answers.append(succeeded) } else { PQclear(succeeded) }
            } catch {
                failure = error
            }
        }
        PQclear(PQgetResult(handle))  // the pipeline's end (PGRES_PIPELINE_SYNC)
        if let failure {
            answers.forEach { PQclear($0) }
            throw failure
        }
        return answers
    }

    /// `result` when it succeeded; otherwise it is cleared and its error thrown.
    private func checked(_ result: OpaquePointer?, sql: String) throws -> OpaquePointer? {
        do {
            try check(result, sql: sql)
            return result
        } catch {
            PQclear(result)
            throw error
        }
    }

    private func connectionError(_ doing: String) -> PostgresError {
        PostgresError(sqlState: isOpen ? "08000" : "", message: "\(Self.errorText(handle)) \(doing)")
    }

    private func statementName(_ sql: String) throws -> String {
        if let name = prepared[sql] { return name }
        let name = "s\(prepared.count + 1)"
        let translated = PostgresDialect.translate(sql)
        let result = PQprepare(handle, name, translated, 0, nil)
        defer { PQclear(result) }
        try check(result, sql: translated)
        prepared[sql] = name
        return name
    }

    private func check(_ result: OpaquePointer?, sql: String) throws {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let state =
                result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) } ?? ""
            throw PostgresError(
                sqlState: isOpen ? state : "", message: "\(Self.errorText(handle)) in `\(sql.prefix(200))`")
        }
    }

    static func errorText(_ handle: OpaquePointer) -> String {
        String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A parameter as PostgreSQL's text input reads it (nil: NULL).
    static func text(_ value: SQLValue) -> String? {
        switch value {
        case .null: nil
        case .integer(let number): String(number)
        case .real(let number): String(number)
        case .text(let text): text
        case .blob(let bytes): "\\x" + bytes.map { String(format: "%02x", $0) }.joined()
        }
    }

    /// The result's rows (at most `limit`).
    static func rows(_ result: OpaquePointer?, limit: Int32 = .max) -> [Row] {
        guard let result else { return [] }
        let (rowCount, columnCount) = (min(PQntuples(result), limit), PQnfields(result))
        let columns = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
        let types = (0..<columnCount).map { PQftype(result, $0) }
        return (0..<rowCount).map { row in
            Row(
                columns: columns,
                values: (0..<columnCount).map { column in
                    guard PQgetisnull(result, row, column) == 0 else { return .null }
                    let text = String(cString: PQgetvalue(result, row, column))
                    return value(text, type: types[Int(column)])
                })
        }
    }

    /// A column's text as the `SQLValue` its type stands for (type OIDs from `pg_type`).
    static func value(_ text: String, type: Oid) -> SQLValue {
        switch type {
        case 20, 21, 23, 26: Int64(text).map(SQLValue.integer) ?? .text(text)
        case 1700: Int64(text).map(SQLValue.integer) ?? Double(text).map(SQLValue.real) ?? .text(text)
        case 700, 701: Double(text).map(SQLValue.real) ?? .text(text)
        case 16: .integer(text == "t" ? 1 : 0)
        case 17: .blob(hexBytes(text.dropFirst(2)))
        default: .text(text)
        }
    }

    static func hexBytes(_ hex: Substring) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    static func withCStrings<T>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        let copies = strings.map { $0.map { strdup($0) } ?? nil }
        defer { for copy in copies { free(copy) } }
        return body(copies.map { $0.map { UnsafePointer($0) } })
    }
}

/// The store's SQL (written for SQLite, kept portable) as PostgreSQL reads it.
enum PostgresDialect {
    /// `?` and `?N` become `$N`; `json_each(x)` becomes `json_array_elements_text((x)::json)`
    /// (the store keeps JSON arrays as text); `last_insert_rowid()` becomes `lastval()` (the
    /// session's last generated id); `LIKE` becomes `ILIKE` (SQLite's LIKE ignores ASCII
    /// case). Quoted text is left alone.
    static func translate(_ sql: String) -> String {
        var output = ""
        var next = 1
        var quote: Character?
        var parentheses: [Bool] = []  // per open parenthesis: does it end a json_each call?
        var index = sql.startIndex
        while index < sql.endIndex {
            let character = sql[index]
            index = sql.index(after: index)
            if let open = quote {
                output.append(character)
                if character == open { quote = nil }
                continue
            }
            switch character {
            case "'", "\"":
                quote = character
                output.append(character)
            case "?":
                let digits = sql[index...].prefix { $0.isASCII && $0.isNumber }
                if digits.isEmpty {
                    output += "$\(next)"
                    next += 1
                } else {
                    output += "$" + digits
                    index = digits.endIndex
                }
            case "(":
                parentheses.append(false)
                output.append(character)
            case ")":
                output += parentheses.popLast() == true ? ")::json)" : ")"
            default:
                let atWordStart = output.last.map { !($0.isLetter || $0.isNumber || $0 == "_") } ?? true
                let rest = sql[sql.index(before: index)...]
                if atWordStart, rest.hasPrefix("json_each(") {
                    output += "json_array_elements_text(("
                    parentheses.append(true)
                    index = sql.index(index, offsetBy: "json_each(".count - 1)
                } else if atWordStart, rest.hasPrefix("last_insert_rowid()") {
                    output += "lastval()"
                    index = sql.index(index, offsetBy: "last_insert_rowid()".count - 1)
                } else if atWordStart, rest.hasPrefix("LIKE ") {
                    output += "ILIKE "
                    index = sql.index(index, offsetBy: "LIKE ".count - 1)
                } else {
                    output.append(character)
                }
            }
        }
        return output
    }
}
