import Crypto
import Foundation

/// Who may open the console: bearer tokens (stored as their SHA-256) and users with password
/// hashes. Read-only console, so every signed-in person sees the same pages.
public struct ConsoleCredentials: Sendable {
    public struct User: Sendable {
        public var name: String
        public var hash: PasswordHash
    }

    /// SHA-256 of each accepted token.
    public var tokenDigests: [[UInt8]]
    public var users: [User]

    public init(tokenDigests: [[UInt8]] = [], users: [User] = []) {
        self.tokenDigests = tokenDigests
        self.users = users
    }

    public var isEmpty: Bool { tokenDigests.isEmpty && users.isEmpty }

    /// `sha256:<64 hex digits>` → the digest; the error says how to make one.
    public static func tokenDigest(_ text: String) throws -> [UInt8] {
        let hex = text.hasPrefix("sha256:") ? String(text.dropFirst(7)) : ""
        var bytes: [UInt8] = []
        var chars = Array(hex)
        guard chars.count == 64 else {
            throw ConsoleConfigError("a token entry must be sha256:<64 hex digits>; make one with `waymark serve --hash-token` (it reads the token from standard input)")
        }
        while !chars.isEmpty {
            guard let b = UInt8(String(chars.prefix(2)), radix: 16) else {
                throw ConsoleConfigError("a token entry must be sha256:<64 hex digits>; '\(hex.prefix(8))…' is not hexadecimal")
            }
            bytes.append(b)
            chars.removeFirst(2)
        }
        return bytes
    }

    public static func digestText(ofToken token: String) -> String {
        "sha256:" + SHA256.hash(data: Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `token` is one of the configured tokens (digests compared in constant time).
    public func accepts(token: String) -> Bool {
        let digest = SymmetricKey(data: Array(SHA256.hash(data: Array(token.utf8))))
        var found = false
        for stored in tokenDigests where SymmetricKey(data: stored) == digest { found = true }
        return found
    }

    /// Whether `name` with `password` is a configured user (a missing user costs a hash too).
    public func accepts(user name: String, password: String) -> Bool {
        guard let user = users.first(where: { $0.name == name }) else {
            _ = users.first?.hash.verify(password)
            return false
        }
        return user.hash.verify(password)
    }
}
