import CCrypto
import OfflineChatLocking
import Synchronization

/// The bus's frames sealed with AES-256-GCM under a secret every node of a cluster shares
/// (`--bus-key-file` or `CHATD_BUS_KEY`): whoever reaches nats-server without it reads nothing
/// of what passes (not a uid, not a message), and a frame it writes fails to open and is
/// dropped. NATS's own accounts keep strangers off the bus; this keeps a stolen NATS
/// credential or a misconfigured server from becoming a stolen conversation or a forged one.
///
/// A sealed frame is `1` (the format), a salt of 16 bytes, a counter of 8, the ciphertext and
/// its 16-byte tag. Each process draws its salt once and seals under its own key,
/// HMAC-SHA256(master, salt), with the counter as the nonce: a nonce never repeats under a key,
/// however many frames a node sends (random 96-bit nonces would wear thin past 2^32 frames).
/// An authentic frame sent again says what it said the first time: a change is immutable at
/// its position (a socket drops a repeat), a revocation is checked against the database, and a
/// typing frame is gone in seconds.
final class BusSeal: Sendable {
    static let format: UInt8 = 1
    static let saltSize = 16
    static let counterSize = 8
    static let tagSize = 16
    static let headerSize = 1 + saltSize + counterSize
    /// The least secret accepted, in bytes (a 256-bit key's worth).
    static let minimumSecret = 32

    /// SHA-256 of the shared secret.
    private let master: [UInt8]
    private let salt: [UInt8]
    private let sendingKey: [UInt8]
    private let counter = Atomic<UInt64>(0)
    /// The keys of the senders heard lately, by salt; a full table starts over (a flood of
    /// made-up salts costs a derivation each, never memory).
    private let receivingKeys = Locked<[[UInt8]: [UInt8]]>([:])
    static let maxSenders = 256

    /// Fails for a secret shorter than `minimumSecret` bytes.
    init(secret: [UInt8]) throws {
        guard secret.count >= Self.minimumSecret else {
            throw StoreError.unavailable(
                "the bus key must be at least \(Self.minimumSecret) bytes (openssl rand -hex 32)")
        }
        master = Self.sha256(secret)
        var salt = [UInt8](repeating: 0, count: Self.saltSize)
        guard RAND_bytes(&salt, Int32(salt.count)) == 1 else {
            throw StoreError.unavailable("no randomness for the bus's salt")
        }
        self.salt = salt
        sendingKey = Self.derive(master, salt)
    }

    /// `plaintext`, sealed.
    func seal(_ plaintext: [UInt8]) -> [UInt8] {
        let count = counter.add(1, ordering: .relaxed).newValue
        var sealed = [Self.format] + salt + withUnsafeBytes(of: count.bigEndian, Array.init)
        let nonce = Self.nonce(count)
        let body = Self.crypt(encrypt: true, key: sendingKey, nonce: nonce, plaintext, tag: nil)
        sealed += body ?? []
        return body == nil ? [] : sealed
    }

    /// What `sealed` says, or nil when it is not a frame sealed under this cluster's secret.
    func open(_ sealed: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard sealed.count >= Self.headerSize + Self.tagSize, sealed[0] == Self.format else { return nil }
        let salt = Array(sealed[1...Self.saltSize])
        let count = sealed[(1 + Self.saltSize)..<Self.headerSize].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let key = receivingKeys.withLock { keys in
            if let key = keys[salt] { return key }
            if keys.count >= Self.maxSenders { keys.removeAll() }
            let key = Self.derive(master, salt)
            keys[salt] = key
            return key
        }
        let tag = Array(sealed[(sealed.count - Self.tagSize)...])
        let ciphertext = Array(sealed[Self.headerSize..<(sealed.count - Self.tagSize)])
        return Self.crypt(encrypt: false, key: key, nonce: Self.nonce(count), ciphertext, tag: tag)
    }

    /// Four zero bytes, then the counter.
    private static func nonce(_ count: UInt64) -> [UInt8] {
        [0, 0, 0, 0] + withUnsafeBytes(of: count.bigEndian, Array.init)
    }

    /// AES-256-GCM: encrypting, the ciphertext and its tag; decrypting, the plaintext if `tag`
    /// proves it (nil otherwise).
    private static func crypt(
        encrypt: Bool, key: [UInt8], nonce: [UInt8], _ input: [UInt8], tag: [UInt8]?
    ) -> [UInt8]? {
        guard let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: input.count + (encrypt ? tagSize : 0))
        var length: Int32 = 0
        var finalLength: Int32 = 0
        let initialised =
            encrypt
            ? EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce)
            : EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce)
        guard initialised == 1 else { return nil }
        let updated = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { source in
                encrypt
                    ? EVP_EncryptUpdate(context, out.baseAddress, &length, source.baseAddress, Int32(source.count))
                    : EVP_DecryptUpdate(context, out.baseAddress, &length, source.baseAddress, Int32(source.count))
            }
        }
        guard updated == 1 else { return nil }
        if encrypt {
            var scratch = [UInt8](repeating: 0, count: 16)
            guard EVP_EncryptFinal_ex(context, &scratch, &finalLength) == 1 else { return nil }
            var computed = [UInt8](repeating: 0, count: tagSize)
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), &computed) == 1 else {
                return nil
            }
            output.replaceSubrange(input.count..., with: computed)
            return output
        }
        guard var expected = tag, EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &expected) == 1
        else { return nil }
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_DecryptFinal_ex(context, &scratch, &finalLength) == 1 else { return nil }
        return output
    }

    private static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil)
        return digest
    }

    private static func derive(_ master: [UInt8], _ salt: [UInt8]) -> [UInt8] {
        var key = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = HMAC(EVP_sha256(), master, Int32(master.count), salt, salt.count, &key, &length)
        return key
    }
}
