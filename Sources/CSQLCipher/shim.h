// SQLCipher 3.4.1 (Debian libsqlcipher-dev) exposes the SQLite API under <sqlcipher/sqlite3.h>.
#define SQLITE_HAS_CODEC 1
#include <sqlcipher/sqlite3.h>
