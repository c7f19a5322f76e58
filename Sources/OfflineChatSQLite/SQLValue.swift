import Foundation

/// A value as SQLite stores it.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A Swift type that binds to a statement parameter and reads back from a column.
///
/// ```swift
/// try db.run("INSERT INTO users(uid, name) VALUES (?, ?)", ["alice", Optional<String>.none])
/// let name: String? = try row.get("name")
/// ```
public protocol SQLValueConvertible: Sendable {
    var sqlValue: SQLValue { get }
    /// Returns nil when the stored value cannot represent `Self`.
    init?(sqlValue: SQLValue)
}

extension SQLValue: SQLValueConvertible {
    @inlinable
    public var sqlValue: SQLValue { self }
    @inlinable
    public init?(sqlValue: SQLValue) { self = sqlValue }
}

extension Int64: SQLValueConvertible {
    @inlinable
    public var sqlValue: SQLValue { .integer(self) }
    @inlinable
    public init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue else { return nil }
        self = value
    }
}

extension Int: SQLValueConvertible {
    @inlinable
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    @inlinable
    public init?(sqlValue: SQLValue) {
        guard let value = Int64(sqlValue: sqlValue) else { return nil }
        self = Int(value)
    }
}

extension Bool: SQLValueConvertible {
    @inlinable
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    @inlinable
    public init?(sqlValue: SQLValue) {
        guard let value = Int64(sqlValue: sqlValue) else { return nil }
        self = value != 0
    }
}

extension Double: SQLValueConvertible {
    @inlinable
    public var sqlValue: SQLValue { .real(self) }
    @inlinable
    public init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension String: SQLValueConvertible {
    @inlinable
    public var sqlValue: SQLValue { .text(self) }
    @inlinable
    public init?(sqlValue: SQLValue) {
        guard case .text(let value) = sqlValue else { return nil }
        self = value
    }
}

extension Data: SQLValueConvertible {
    @inlinable
    public var sqlValue: SQLValue { .blob([UInt8](self)) }
    @inlinable
    public init?(sqlValue: SQLValue) {
        guard case .blob(let bytes) = sqlValue else { return nil }
        self = Data(bytes)
    }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    @inlinable
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
    @inlinable
    public init?(sqlValue: SQLValue) {
        if case .null = sqlValue {
            self = .none
        } else if let value = Wrapped(sqlValue: sqlValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}
