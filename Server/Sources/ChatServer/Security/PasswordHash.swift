import CCrypto
import Foundation

/// Group passwords at rest: PBKDF2-HMAC-SHA256 with a random 16-byte salt, stored as
/// `pbkdf2-sha256$<iterations>$<salt base64>$<hash base64>`. Hash and verify outside the
/// store's write lock: each costs tens of milliseconds on purpose.
enum PasswordHash {
    static let iterations = 100_000

    static func make(_ password: String) throws -> String {
        var salt = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&salt, Int32(salt.count)) == 1 else {
            throw HTTPError(500, .internalError, "no randomness for a password salt")
        }
        let hash = try derive(password, salt: salt, iterations: iterations)
        return "pbkdf2-sha256$\(iterations)$\(Data(salt).base64EncodedString())$\(Data(hash).base64EncodedString())"
    }

    /// Whether `password` matches `stored` (false for anything that is not a stored hash).
    static func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 4, parts[0] == "pbkdf2-sha256", let iterations = Int(parts[1]), (1...10_000_000).contains(iterations),
              let salt = Data(base64Encoded: parts[2]), let expected = Data(base64Encoded: parts[3]),
              let actual = try? derive(password, salt: Array(salt), iterations: iterations, length: expected.count) else {
            return false
        }
        return actual.count == expected.count && CRYPTO_memcmp(actual, Array(expected), actual.count) == 0
    }

    private static func derive(_ password: String, salt: [UInt8], iterations: Int, length: Int = 32) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        let bytes = Array(password.utf8)
        let status = bytes.withUnsafeBufferPointer { passwordBytes in
            passwordBytes.withMemoryRebound(to: CChar.self) { chars in
                PKCS5_PBKDF2_HMAC(chars.baseAddress, Int32(bytes.count), salt, Int32(salt.count), Int32(iterations),
                                  EVP_sha256(), Int32(length), &output)
            }
        }
        guard status == 1 else { throw HTTPError(500, .internalError, "password hashing failed") }
        return output
    }
}
