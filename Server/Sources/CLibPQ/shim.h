// PostgreSQL's C client (Debian libpq-dev).
#include <libpq-fe.h>
