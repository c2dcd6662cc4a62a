import Foundation
import Testing
@testable import WaymarkConsole
import WaymarkService

/// Sign-in material: password hashes, token digests, and the configuration that holds them.
@Suite("Console sign-in")
struct ConsoleAuthTests {
    @Test func aPasswordHashVerifiesItsPasswordOnly() throws {
        let hash = try PasswordHash.make(password: "correct horse", rounds: 2000)
        #expect(hash.verify("correct horse"))
        #expect(!hash.verify("correct hors"))
        let reread = try PasswordHash(hash.text)
        #expect(reread == hash && reread.verify("correct horse"))
        #expect(try PasswordHash.make(password: "correct horse", rounds: 2000).text != hash.text, "a fresh salt each time")
    }

    @Test func malformedHashesAndDigestsAreClearErrors() {
        expectError("--hash-password") { _ = try PasswordHash("plain-text-password") }
        expectError("at least 1000") { _ = try PasswordHash("pbkdf2-sha256$10$c2FsdHNhbHQ=$AAAA") }
        expectError("--hash-token") { _ = try ConsoleCredentials.tokenDigest("secret-token") }
    }

    @Test func tokensAndUsersAreAccepted() throws {
        let digest = try ConsoleCredentials.tokenDigest(ConsoleCredentials.digestText(ofToken: "s3cret-token"))
        let credentials = ConsoleCredentials(tokenDigests: [digest],
                                             users: [.init(name: "ops", hash: try PasswordHash.make(password: "pw-1", rounds: 2000))])
        #expect(credentials.accepts(token: "s3cret-token"))
        #expect(!credentials.accepts(token: "s3cret-tokem"))
        #expect(credentials.accepts(user: "ops", password: "pw-1"))
        #expect(!credentials.accepts(user: "ops", password: "pw-2"))
        #expect(!credentials.accepts(user: "nobody", password: "pw-1"))
    }

    @Test func configurationNeedsAWayToSignIn() throws {
        let layers = try ConfigLayers(filePath: nil, envPrefix: "WAYMARK_CONSOLE", flags: ["site": "s.yaml"], environment: [:], knownKeys: ConsoleConfig.keys)
        expectError("auth.tokens or auth.users") { _ = try ConsoleConfig.load(layers) }
        let hash = try PasswordHash.make(password: "pw", rounds: 2000).text
        let good = try ConfigLayers(filePath: nil, envPrefix: "WAYMARK_CONSOLE",
                                    flags: ["site": "s.yaml", "auth.users": "ops:\(hash)", "auth.tokens": ConsoleCredentials.digestText(ofToken: "t"),
                                            "listen.port": "9000"],
                                    environment: [:], knownKeys: ConsoleConfig.keys)
        let config = try ConsoleConfig.load(good)
        #expect(config.port == 9000 && config.credentials.users.map(\.name) == ["ops"] && config.credentials.accepts(token: "t"))
        let bad = try ConfigLayers(filePath: nil, envPrefix: "WAYMARK_CONSOLE", flags: ["site": "s.yaml", "auth.users": "ops"],
                                   environment: [:], knownKeys: ConsoleConfig.keys)
        expectError("NAME:HASH") { _ = try ConsoleConfig.load(bad) }
    }

    @Test func signInOnlyRedirectsToLocalPaths() {
        #expect(ConsoleRoutes.safeNext("/devices?q=1") == "/devices?q=1")
        #expect(ConsoleRoutes.safeNext("https://evil.example/") == "/")
        #expect(ConsoleRoutes.safeNext("//evil.example/") == "/")
        #expect(ConsoleRoutes.formFields("user=ops&password=a%26b+c&next=%2Fgateways") == ["user": "ops", "password": "a&b c", "next": "/gateways"])
    }
}

/// Expects `body` to throw an error whose description contains `text`.
func expectError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected an error mentioning \(text)", sourceLocation: sourceLocation)
    } catch {
        #expect("\(error)".contains(text), "\(error)", sourceLocation: sourceLocation)
    }
}
