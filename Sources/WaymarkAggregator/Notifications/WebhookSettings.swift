import Foundation
import WaymarkCore
import WaymarkService
import Yams

/// The `webhooks.*` keys of the aggregator's configuration (deploy/aggregator.example.yaml): how
/// notifications are POSTed to the webhooks of the site file's rules.
public struct WebhookSettings: Sendable {
    /// `webhooks.secret` (secret): the HMAC-SHA256 key of every rule without its own.
    public var secret: String?
    /// `webhooks.secrets_file`: a YAML mapping `rule id: secret`, one secret per rule (keep it
    /// readable by the aggregator only).
    public var secretsFile: String?
    /// `webhooks.timeout_s`: the whole request, connection included.
    public var timeoutS = 10.0
    /// `webhooks.retry_initial_s`, `webhooks.retry_max_s`: the wait after a failed attempt starts
    /// here and doubles up to the maximum.
    public var retryInitialS = 1.0
    public var retryMaxS = 300.0
    /// `webhooks.give_up_after_s`: a notification still not delivered this long after it was
    /// stored is given up (`failed`).
    public var giveUpAfterS = 86_400.0
    /// `webhooks.queue_size`: deliveries held (waiting or retrying); beyond it the oldest is
    /// dropped (`dropped`, metric `waymark_aggregator_webhook_dropped_total`).
    public var queueSize = 10_000
    /// `webhooks.concurrency`: requests in flight at once.
    public var concurrency = 4

    public init() {}

    static let keys = ["webhooks.secret", "webhooks.secrets_file", "webhooks.timeout_s", "webhooks.retry_initial_s",
                       "webhooks.retry_max_s", "webhooks.give_up_after_s", "webhooks.queue_size", "webhooks.concurrency"]

    /// The shortest secret accepted (bytes).
    public static let minimumSecretBytes = 16

    static func load(_ layers: ConfigLayers, check: (Bool, String, String) throws -> Void) throws -> WebhookSettings {
        var w = WebhookSettings()
        w.secret = layers.optionalString("webhooks.secret")
        w.secretsFile = layers.optionalString("webhooks.secrets_file").flatMap { $0.isEmpty ? nil : $0 }
        w.timeoutS = try layers.double("webhooks.timeout_s", default: w.timeoutS)
        try check(w.timeoutS >= 0.1 && w.timeoutS <= 300, "webhooks.timeout_s", "must be 0.1 … 300 seconds")
        w.retryInitialS = try layers.double("webhooks.retry_initial_s", default: w.retryInitialS)
        try check(w.retryInitialS >= 0.1 && w.retryInitialS <= 3600, "webhooks.retry_initial_s", "must be 0.1 … 3600 seconds")
        w.retryMaxS = try layers.double("webhooks.retry_max_s", default: w.retryMaxS)
        try check(w.retryMaxS >= w.retryInitialS && w.retryMaxS <= 86_400, "webhooks.retry_max_s",
                  "must be at least webhooks.retry_initial_s and at most 86400 seconds")
        w.giveUpAfterS = try layers.double("webhooks.give_up_after_s", default: w.giveUpAfterS)
        try check(w.giveUpAfterS >= 1 && w.giveUpAfterS <= 30 * 86_400, "webhooks.give_up_after_s", "must be 1 … 2592000 seconds (30 days)")
        w.queueSize = try layers.int("webhooks.queue_size", default: w.queueSize)
        try check((1...10_000_000).contains(w.queueSize), "webhooks.queue_size", "must be 1 … 10000000")
        w.concurrency = try layers.int("webhooks.concurrency", default: w.concurrency)
        try check((1...256).contains(w.concurrency), "webhooks.concurrency", "must be 1 … 256")
        return w
    }

    /// The secret of every rule that has a webhook: from `secrets_file`, else `secret`. Throws a
    /// configuration error naming each rule without one (or with one that is too short), and what
    /// to do; never includes a secret in the message.
    public func secrets(for site: Site) throws -> [String: String] {
        let withWebhook = site.notifications.filter { $0.webhook != nil }
        guard !withWebhook.isEmpty else { return [:] }
        var perRule: [String: String] = [:]
        if let secretsFile {
            let text: String
            do { text = try String(contentsOfFile: secretsFile, encoding: .utf8) } catch {
                throw ConfigLayers.ConfigError("webhooks.secrets_file: cannot read \(secretsFile): \(error.localizedDescription)")
            }
            guard let mapping = (try? Yams.compose(yaml: text))??.mapping else {
                throw ConfigLayers.ConfigError("webhooks.secrets_file: \(secretsFile) must be a YAML mapping of rule id to secret, e.g. `hello-shop: 3c0f…` (one per line)")
            }
            let ruleIDs = Set(site.notifications.map(\.id))
            for (k, v) in mapping {
                guard let rule = k.string, let secret = v.string else {
                    throw ConfigLayers.ConfigError("webhooks.secrets_file: \(secretsFile): every entry must be `rule-id: secret` (strings)")
                }
                guard ruleIDs.contains(rule) else {
                    throw ConfigLayers.ConfigError("webhooks.secrets_file: \(secretsFile) names rule '\(rule)', which the site file does not have; rules: \(site.notifications.map(\.id).joined(separator: ", "))")
                }
                perRule[rule] = secret
            }
        }
        var out: [String: String] = [:]
        var missing: [String] = [], short: [String] = []
        for rule in withWebhook {
            guard let secret = perRule[rule.id] ?? secret, !secret.isEmpty else { missing.append(rule.id); continue }
            if secret.utf8.count < Self.minimumSecretBytes { short.append(rule.id) }
            out[rule.id] = secret
        }
        if !missing.isEmpty {
            throw ConfigLayers.ConfigError("notification rule\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", ")) \(missing.count == 1 ? "has" : "have") a webhook but no secret to sign it with: add `<rule id>: <secret>` to the file named by webhooks.secrets_file, or set webhooks.secret (WAYMARK_AGGREGATOR_WEBHOOKS_SECRET) for all rules; e.g. `openssl rand -hex 32` makes one")
        }
        if !short.isEmpty {
            throw ConfigLayers.ConfigError("the webhook secret of \(short.joined(separator: ", ")) is shorter than \(Self.minimumSecretBytes) bytes; use a long random one, e.g. from `openssl rand -hex 32`")
        }
        return out
    }
}
