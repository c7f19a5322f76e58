// The system's plain SQLite (Debian libsqlite3-dev, 3.40).
#include <sqlite3.h>

// sqlite3_config is variadic (Swift cannot call it): SQLITE_CONFIG_MEMSTATUS off. Its
// statistics cost a process-wide mutex around every allocation SQLite makes.
static inline int sqlitekit_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
