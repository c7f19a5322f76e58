/// An SQLite result code (primary or extended), matchable in `catch` clauses.
///
/// ```swift
/// do { try db.run("INSERT INTO t(id) VALUES (1)") }
/// catch let error as SQLiteError where error.code.primary == .constraint { ... }
/// ```
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low byte of an extended code).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    public var description: String { "SQLITE \(rawValue) (\(String(cString: sqlite3_errstr(rawValue))))" }

    public static let ok = ResultCode(rawValue: SQLITE_OK)
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    public static let `internal` = ResultCode(rawValue: SQLITE_INTERNAL)
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    public static let range = ResultCode(rawValue: SQLITE_RANGE)
    /// "file is not a database": also what SQLCipher reports for a wrong key.
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    public static let row = ResultCode(rawValue: SQLITE_ROW)
    public static let done = ResultCode(rawValue: SQLITE_DONE)
    public static let constraintUnique = ResultCode(rawValue: 2067)  // SQLITE_CONSTRAINT_UNIQUE
    public static let constraintPrimaryKey = ResultCode(rawValue: 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
}
