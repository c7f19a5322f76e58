// OpenSSL (Debian libssl-dev 3.0) for the Linux transports' TLS: https and wss. Its macros
// are wrapped here because Swift cannot call them.
#include <openssl/ssl.h>
#include <openssl/err.h>

/// Server Name Indication: the host name the client asks for.
static inline long chat_tls_set_server_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

/// Lets a write continue from a moved buffer and return after part of it.
static inline long chat_tls_set_write_modes(SSL *ssl) {
    return SSL_set_mode(ssl, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
}

/// At least TLS 1.2.
static inline long chat_tls_require_1_2(SSL_CTX *context) {
    return SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}
