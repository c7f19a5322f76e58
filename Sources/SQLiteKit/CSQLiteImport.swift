// Exactly one C SQLite is linked, chosen by the package trait.
#if SystemSQLite
@_exported import CSQLite
#elseif SQLCipher
@_exported import CSQLCipher
#else
#error("Enable the SQLCipher (default) or SystemSQLite trait.")
#endif

/// Tells SQLite to copy bound text and blobs before `sqlite3_bind_*` returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
