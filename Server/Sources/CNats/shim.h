// NATS's C client (Debian libnats-dev): the realtime bus between chatd nodes.
#include <nats/nats.h>
