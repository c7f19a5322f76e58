// GNU libmicrohttpd (Debian libmicrohttpd-dev 0.9.75). Its variadic calls are wrapped here
// because Swift cannot call C variadic functions.
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

static inline int chatd_hex(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/// Percent-decoding of paths and query arguments, in place, that leaves `%00`, `%2F` and
/// `%25` as they are: a decoded NUL would cut the C string short (`/v1/users/alice%00x` was
/// alice) and a decoded `/` would become a path separator. chatd refuses the first two in a
/// path, decodes them in a query value, and decodes `%25` last (`HTTPRequest.KeptEscapes`).
static size_t chatd_unescape(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls; (void)connection;
    char *out = text;
    for (const char *in = text; *in != 0;) {
        int high = in[0] == '%' ? chatd_hex(in[1]) : -1;
        int low = high >= 0 ? chatd_hex(in[2]) : -1;
        int value = high * 16 + low;
        if (high < 0 || low < 0 || value == 0 || value == '/' || value == '%') {
            int length = (high >= 0 && low >= 0) ? 3 : 1;
            memmove(out, in, (size_t)length);
            out += length;
            in += length;
        } else {
            *out++ = (char)value;
            in += 3;
        }
    }
    *out = 0;
    return (size_t)(out - text);
}

/// Starts a daemon bound to `host` (an IPv4 or IPv6 address) and `port` (0 picks a free port)
/// with an internal thread pool on epoll, WebSocket upgrades allowed, at most
/// `connection_limit` connections, and a callback on every connection's start and end. With
/// `tls_key` and `tls_cert` (PEM text) it speaks HTTPS (GnuTLS) with the versions and suites
/// the GnuTLS priority string `tls_priorities` allows. NULL when the address does not parse,
/// the priorities do not, or the daemon cannot start.
static inline struct MHD_Daemon *chatd_mhd_start(const char *host, uint16_t port, unsigned int threads,
                                                 unsigned int connection_timeout, unsigned int connection_limit,
                                                 const char *tls_key, const char *tls_cert,
                                                 const char *tls_priorities,
                                                 MHD_AccessHandlerCallback handler, void *handler_cls,
                                                 MHD_RequestCompletedCallback completed, void *completed_cls,
                                                 MHD_NotifyConnectionCallback notify, void *notify_cls) {
    struct sockaddr_storage address;
    memset(&address, 0, sizeof address);
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_UPGRADE
                       | MHD_USE_SUSPEND_RESUME;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&address;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&address;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        flags |= MHD_USE_IPv6;
    } else {
        return NULL;
    }
    struct MHD_OptionItem tls[] = {
        { MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)tls_key },
        { MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)tls_cert },
        { MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)tls_priorities },
        { MHD_OPTION_END, 0, NULL },
    };
    if (tls_key != NULL && tls_cert != NULL) {
        flags |= MHD_USE_TLS;
    } else {
        tls[0].option = MHD_OPTION_END;
    }
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
                            MHD_OPTION_UNESCAPE_CALLBACK, chatd_unescape, NULL,
                            MHD_OPTION_ARRAY, tls,
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
