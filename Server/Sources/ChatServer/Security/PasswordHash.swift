import CCrypto
import Foundation
import OfflineChatLocking

/// Group passwords at rest: scrypt (memory-hard: N = 2^14, r = 8, p = 5, 16 MiB a guess, the
/// OWASP parameters for this memory) with a random 16-byte salt, stored as
/// `scrypt$<N>$<r>$<p>$<salt base64>$<hash base64>`. Hashes made before (PBKDF2-HMAC-SHA256,
/// `pbkdf2-sha256$<iterations>$<salt>$<hash>`) still verify. Hash and verify outside the
/// store's write lock: each costs tens of milliseconds on purpose, and guesses are further
/// slowed by `Store.takeJoinAttempt`.
enum PasswordHash {
    static let cost: (n: UInt64, r: UInt64, p: UInt64) = (1 << 14, 8, 5)

    static func make(_ password: String) throws -> String {
        var salt = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&salt, Int32(salt.count)) == 1 else {
            throw HTTPError(500, .internalError, "no randomness for a password salt")
        }
        let hash = try scrypt(password, salt: salt, n: cost.n, r: cost.r, p: cost.p)
        return
            "scrypt$\(cost.n)$\(cost.r)$\(cost.p)$\(Data(salt).base64EncodedString())$\(Data(hash).base64EncodedString())"
    }

    /// Whether `password` matches `stored` (false for anything that is not a stored hash).
    static func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard let encoded = parts.last, let expected = Data(base64Encoded: encoded), parts.count >= 4,
            let salt = Data(base64Encoded: parts[parts.count - 2])
        else { return false }
        let numbers = parts.dropFirst().dropLast(2).compactMap { UInt64($0) }
        let actual: [UInt8]?
        switch (parts[0], numbers.count, parts.count) {
        case ("scrypt", 3, 6)
        where (2...(1 << 20)).contains(numbers[0]) && (1...32).contains(numbers[1]) && (1...16).contains(numbers[2]):
            actual = try? scrypt(
                password, salt: Array(salt), n: numbers[0], r: numbers[1], p: numbers[2], length: expected.count)
        case ("pbkdf2-sha256", 1, 4) where (1...10_000_000).contains(numbers[0]):
            actual = try? derive(password, salt: Array(salt), iterations: Int(numbers[0]), length: expected.count)
        default:
            actual = nil
        }
        guard let actual, actual.count == expected.count else { return false }
        return CRYPTO_memcmp(actual, Array(expected), actual.count) == 0
    }

    private static func scrypt(
        _ password: String, salt: [UInt8], n: UInt64, r: UInt64, p: UInt64, length: Int = 32
    ) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        let bytes = Array(password.utf8)
        let status = bytes.withUnsafeBufferPointer { passwordBytes in
            passwordBytes.withMemoryRebound(to: CChar.self) { chars in
                EVP_PBE_scrypt(chars.baseAddress, bytes.count, salt, salt.count, n, r, p, 256 << 20, &output, length)
            }
        }
        guard status == 1 else { throw HTTPError(500, .internalError, "password hashing failed") }
        return output
    }

    private static func derive(_ password: String, salt: [UInt8], iterations: Int, length: Int = 32) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        let bytes = Array(password.utf8)
        let status = bytes.withUnsafeBufferPointer { passwordBytes in
            passwordBytes.withMemoryRebound(to: CChar.self) { chars in
                PKCS5_PBKDF2_HMAC(
                    chars.baseAddress, Int32(bytes.count), salt, Int32(salt.count), Int32(iterations),
                    EVP_sha256(), Int32(length), &output)
            }
        }
        guard status == 1 else { throw HTTPError(500, .internalError, "password hashing failed") }
        return output
    }
}

/// At most `count` password hashes at once in this process (each holds a thread and 16 MiB for
/// tens of milliseconds), and at most `queue` more waiting for one; past that a hash is refused
/// at once (503), so hashing can never take every HTTP thread (a group owner changing the
/// password in a loop made another user's `GET /v1/me` take 3 s). Each user's hashes also take
/// from their own budget (`RateLimiter.Kind.passwordHash`).
final class HashingSlots: Sendable {
    private let free: DispatchSemaphore
    private let admitted = Locked(0)
    let limit: Int

    init(count: Int, queue: Int) {
        free = DispatchSemaphore(value: count)
        limit = count + queue
    }

    /// Runs `body` in a slot (waiting for one behind at most `queue` others), or throws 503.
    func run<T>(_ body: () throws -> T) throws -> T {
        let entered = admitted.withLock { admitted in
            guard admitted < limit else { return false }
            admitted += 1
            return true
        }
        guard entered else { throw HTTPError(503, .unavailable, "password hashing is busy; try again in a moment") }
        defer { admitted.withLock { $0 -= 1 } }
        free.wait()
        defer { free.signal() }
        return try body()
    }
}

extension PasswordHash {
    /// Half the machine's cores hash (one at least), and as many again may wait: the other
    /// HTTP threads keep answering requests.
    static let slots: HashingSlots = {
        let count = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
        return HashingSlots(count: count, queue: count * 3)
    }()
}
