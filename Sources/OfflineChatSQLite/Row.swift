/// One result row: values by index or by column name.
public struct Row: Sendable {
    public let columns: [String]
    public let values: [SQLValue]

    /// A row made elsewhere (another engine's results read into the same shape).
    public init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    /// Reads column `index` as `T`; throws `.mismatch` when the stored value does not fit.
    /// Inlinable, as the conversions are: a caller's reads compile to its types (chatd's
    /// conversation list spent 40% of its store time in unspecialized reads).
    @inlinable
    public func get<T: SQLValueConvertible>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard values.indices.contains(index) else {
            throw SQLiteError(code: .range, message: "no column at index \(index)")
        }
        guard let value = T(sqlValue: values[index]) else {
            throw SQLiteError(
                code: .mismatch,
                message: "column \(columns[index]) holds \(values[index]), not \(T.self)")
        }
        return value
    }

    /// Reads the column named `name` as `T`.
    @inlinable
    public func get<T: SQLValueConvertible>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let index = columns.firstIndex(of: name) else {
            throw SQLiteError(code: .range, message: "no column named \(name)")
        }
        return try get(index, as: type)
    }
}
