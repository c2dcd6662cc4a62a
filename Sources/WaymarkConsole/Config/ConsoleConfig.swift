import Foundation
import WaymarkMQTT
import WaymarkService

/// A configuration problem, with the key and the fix.
public struct ConsoleConfigError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// `waymark serve`'s configuration: flags > environment (`WAYMARK_CONSOLE_<KEY>`) > YAML file
/// (`--config`) > these defaults. Documented for operators in deploy/console.example.yaml.
public struct ConsoleConfig: Sendable {
    /// `site`: the site file (required): regions, positions, floors, gateways.
    public var sitePath: String
    /// `topic_prefix`: default `waymark/v1/<site id>`.
    public var topicPrefix: String?
    /// `listen.host`, `listen.port`: where the console listens. Keep it on 127.0.0.1 behind a
    /// TLS reverse proxy (deploy/README.md).
    public var host = "127.0.0.1"
    public var port = 8080
    /// `database.url`: a login in the read-only `waymark_report` role is enough and is what to use.
    public var databaseURL = ""
    /// `database.password` (secret): when the URL has none.
    public var databasePassword: String?
    /// `mqtt.*`: the broker, as for the aggregator (credentials that may read `…/devices/+/state`
    /// and `…/gateways/+/status`).
    public var mqtt = MQTTSettings()
    /// `auth.tokens`: SHA-256 digests of accepted bearer tokens, `sha256:<hex>` (list).
    public var credentials = ConsoleCredentials()
    /// `auth.session_hours`: how long a sign-in lasts.
    public var sessionHours = 12.0
    /// `auth.disabled`: no sign-in at all (only for a console bound to 127.0.0.1 on a trusted host).
    public var authDisabled = false
    /// `log.level`.
    public var logLevel = "info"

    public init(sitePath: String) {
        self.sitePath = sitePath
    }

    public static let keys = [
        "site", "topic_prefix", "listen.host", "listen.port", "database.url", "database.password",
        "mqtt.url", "mqtt.client_id", "mqtt.username", "mqtt.password", "mqtt.ca_file", "mqtt.cert_file", "mqtt.key_file",
        "mqtt.keepalive_s", "mqtt.max_inflight", "mqtt.reconnect_min_s", "mqtt.reconnect_max_s",
        "auth.tokens", "auth.users", "auth.session_hours", "auth.disabled", "log.level",
    ]
    public static let secretKeys: Set<String> = ["database.password", "mqtt.password", "auth.tokens", "auth.users"]

    /// The libpq connection string: the URL, with the password from `database.password` when set.
    public var databaseConnectionString: String {
        guard let password = databasePassword, !password.isEmpty else { return databaseURL }
        let escaped = password.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
        return databaseURL.isEmpty ? "password='\(escaped)'" : "\(databaseURL) password='\(escaped)'"
    }

    public static func load(_ layers: ConfigLayers) throws -> ConsoleConfig {
        func check(_ ok: Bool, _ key: String, _ why: String) throws {
            guard ok else {
                let at = layers.raw(key).map { layers.where_(key, $0.source) } ?? key
                throw ConsoleConfigError("\(at): \(why)")
            }
        }
        guard let site = layers.optionalString("site"), !site.isEmpty else {
            throw ConsoleConfigError("'site' is required: pass --site FILE, set WAYMARK_CONSOLE_SITE or add site: to the config file")
        }
        var c = ConsoleConfig(sitePath: site)
        c.topicPrefix = layers.optionalString("topic_prefix")
        c.host = layers.string("listen.host", default: c.host)
        c.port = try layers.int("listen.port", default: c.port)
        try check((0...65535).contains(c.port), "listen.port", "must be 0 (pick a free port) … 65535")
        c.databaseURL = layers.string("database.url", default: c.databaseURL)
        c.databasePassword = layers.optionalString("database.password")
        c.mqtt = try MQTTSettings.load(layers)
        c.sessionHours = try layers.double("auth.session_hours", default: c.sessionHours)
        try check(c.sessionHours > 0 && c.sessionHours <= 24 * 30, "auth.session_hours", "must be more than 0 and at most 720 hours")
        c.authDisabled = try layers.bool("auth.disabled", default: false)
        for entry in Self.list(layers.optionalString("auth.tokens")) {
            do { c.credentials.tokenDigests.append(try ConsoleCredentials.tokenDigest(entry)) } catch {
                throw ConsoleConfigError("auth.tokens: \(error)")
            }
        }
        for entry in Self.list(layers.optionalString("auth.users")) {
            guard let colon = entry.firstIndex(of: ":"), colon != entry.startIndex else {
                throw ConsoleConfigError("auth.users: each entry is NAME:HASH (the hash from `waymark serve --hash-password`)")
            }
            let name = String(entry[..<colon])
            do {
                c.credentials.users.append(.init(name: name, hash: try PasswordHash(String(entry[entry.index(after: colon)...]))))
            } catch {
                throw ConsoleConfigError("auth.users, user '\(name)': \(error)")
            }
        }
        if c.credentials.isEmpty && !c.authDisabled {
            throw ConsoleConfigError("no way to sign in: set auth.tokens or auth.users (see deploy/console.example.yaml), or auth.disabled: true for a console on a trusted host only")
        }
        c.logLevel = layers.string("log.level", default: c.logLevel)
        return c
    }

    static func list(_ text: String?) -> [String] {
        (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
