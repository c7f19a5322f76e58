#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
// libcrypto (OpenSSL 3) for password hashing: PBKDF2-HMAC-SHA256, random salts and a
// constant-time compare.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#endif
