// Exactly one C SQLite is linked, chosen by the package trait: on Apple platforms Apple's own
// `SQLite3` or the official SQLCipher package's `SQLCipher`, elsewhere the system's library
// (`COfflineChatSQLite`, `COfflineChatSQLCipher`: Debian's libsqlite3-dev, libsqlcipher-dev).
#if SystemSQLite && SQLCipher
#error("Enable one of the SQLCipher and SystemSQLite traits, not both: with both, the cache would not be encrypted.")
#elseif SystemSQLite
#if canImport(Darwin)
@_exported import SQLite3
#else
@_exported import COfflineChatSQLite
#endif
#elseif SQLCipher
#if canImport(Darwin)
@_exported import SQLCipher
#else
@_exported import COfflineChatSQLCipher
#endif
#else
#error("Enable the SQLCipher (default) or SystemSQLite trait.")
#endif

/// Tells SQLite to copy bound text and blobs before `sqlite3_bind_*` returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
