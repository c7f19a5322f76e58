// GNU libmicrohttpd (Debian libmicrohttpd-dev 0.9.75). Its variadic calls are wrapped here
// because Swift cannot call C variadic functions.
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// Starts a daemon bound to 127.0.0.1:port (0 picks a free port) with an internal thread pool
/// on epoll, WebSocket upgrades allowed, at most `connection_limit` connections, and a callback
/// on every connection's start and end.
static inline struct MHD_Daemon *chatd_mhd_start(uint16_t port, unsigned int threads,
                                                 unsigned int connection_timeout, unsigned int connection_limit,
                                                 MHD_AccessHandlerCallback handler, void *handler_cls,
                                                 MHD_RequestCompletedCallback completed, void *completed_cls,
                                                 MHD_NotifyConnectionCallback notify, void *notify_cls) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_UPGRADE
                       | MHD_USE_SUSPEND_RESUME;
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
                            MHD_OPTION_END);
}

/// A connection's socket (-1 if unknown).
static inline int chatd_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/// The port the daemon listens on.
static inline uint16_t chatd_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/// Hands an upgraded (WebSocket) socket back to the library, which closes it.
static inline enum MHD_Result chatd_mhd_upgrade_close(struct MHD_UpgradeResponseHandle *handle) {
    return MHD_upgrade_action(handle, MHD_UPGRADE_ACTION_CLOSE);
}
