/// An error reported by SQLite, or by SQLiteKit when a value cannot be read as asked.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The (extended) result code; compare `code.primary` for the family.
    public let code: ResultCode
    /// SQLite's message.
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?

    public init(code: ResultCode, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        let statement = sql.map { " in `\($0)`" } ?? ""
        return "\(code): \(message)\(statement)"
    }
}
