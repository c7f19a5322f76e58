#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
// libcrypto (OpenSSL 3): password hashing (scrypt, PBKDF2-HMAC-SHA256), random salts, a
// constant-time compare, SHA-256, and the bus's sealed frames (AES-256-GCM, HMAC-SHA256).
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#endif
