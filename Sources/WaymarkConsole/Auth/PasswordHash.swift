import Crypto
import CryptoExtras
import Foundation

/// Password hashes as the console's configuration holds them:
/// `pbkdf2-sha256$<rounds>$<salt, base64>$<key, base64>` (PBKDF2-HMAC-SHA256 from swift-crypto,
/// 32-byte key, 16-byte random salt). `waymark serve --hash-password` prints one.
public struct PasswordHash: Sendable, Equatable {
    public static let scheme = "pbkdf2-sha256"
    public static let defaultRounds = 210_000

    public var rounds: Int
    public var salt: [UInt8]
    public var key: [UInt8]

    public struct FormatError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Parses the stored form; the error says what is wrong and how to make a good one.
    public init(_ text: String) throws(FormatError) {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        let fix = "make one with `waymark serve --hash-password` (it reads the password from standard input)"
        guard parts.count == 4, parts[0] == Self.scheme else {
            throw FormatError(description: "a password hash must look like \(Self.scheme)$ROUNDS$SALT$KEY; \(fix)")
        }
        guard let rounds = Int(parts[1]), rounds >= 1000 else {
            throw FormatError(description: "the rounds of a password hash must be a number of at least 1000; \(fix)")
        }
        guard let salt = Data(base64Encoded: String(parts[2])), salt.count >= 8,
              let key = Data(base64Encoded: String(parts[3])), key.count == 32 else {
            throw FormatError(description: "the salt or key of a password hash is not valid base64 of the right length; \(fix)")
        }
        self.rounds = rounds
        self.salt = Array(salt)
        self.key = Array(key)
    }

    /// A new hash of `password` with a random salt.
    public static func make(password: String, rounds: Int = defaultRounds) throws -> PasswordHash {
        var rng = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let key = try derive(password, salt: salt, rounds: rounds)
        return try PasswordHash("\(scheme)$\(rounds)$\(Data(salt).base64EncodedString())$\(Data(key).base64EncodedString())")
    }

    public var text: String { "\(Self.scheme)$\(rounds)$\(Data(salt).base64EncodedString())$\(Data(key).base64EncodedString())" }

    /// Whether `password` is the one hashed (compared in constant time).
    public func verify(_ password: String) -> Bool {
        guard let derived = try? Self.derive(password, salt: salt, rounds: rounds) else { return false }
        return SymmetricKey(data: derived) == SymmetricKey(data: key)
    }

    static func derive(_ password: String, salt: [UInt8], rounds: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(from: Array(password.utf8), salt: salt, using: .sha256,
                                                    outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { Array($0) }
    }
}
