import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkService
@testable import WaymarkAggregator

/// The parts of webhook delivery that need no network: the signature, the retry decisions, the
/// bounded queue, the PUBACK matching and the secrets configuration.
@Suite struct WebhookDeliveryTests {
    @Test func theSignatureIsHMACSHA256OfTimestampDotBody() {
        // Checked with Python: hmac.new(secret, b"1780300000." + body, hashlib.sha256).hexdigest()
        let body = Array(#"{"id":"x","message":"Hi"}"#.utf8)
        #expect(WebhookSigner.signature(secret: "0123456789abcdef-secret", timestamp: "1780300000", body: body)
                == "sha256=0673063cfeabc5de4040ee2ad67bccd8a072d6af9fe105b62f3af41c6ec692bb")
        #expect(WebhookSigner.signature(secret: "0123456789abcdef-secreT", timestamp: "1780300000", body: body)
                != WebhookSigner.signature(secret: "0123456789abcdef-secret", timestamp: "1780300000", body: body))
    }

    @Test func retriesBackOffUntilGivingUpAndClientErrorsAreFinal() {
        let policy = WebhookRetryPolicy(initialS: 1, maxS: 60, giveUpAfterS: 3600)
        #expect((1...9).map { policy.backoff(afterAttempt: $0) } == [1, 2, 4, 8, 16, 32, 60, 60, 60])
        #expect(policy.decide(status: 204, attempt: 1, storedAt: 0, now: 5) == .delivered)
        #expect(policy.decide(status: nil, attempt: 3, storedAt: 0, now: 10) == .retry(at: 14))
        #expect(policy.decide(status: 503, attempt: 1, storedAt: 0, now: 10) == .retry(at: 11))
        #expect(policy.decide(status: 429, attempt: 1, storedAt: 0, now: 10) == .retry(at: 11))
        #expect(policy.decide(status: 408, attempt: 1, storedAt: 0, now: 10) == .retry(at: 11))
        guard case .failed(let why) = policy.decide(status: 404, attempt: 1, storedAt: 0, now: 10) else {
            Issue.record("a 404 is final")
            return
        }
        #expect(why.hasPrefix("HTTP 404: the receiver refused the request"))
        guard case .failed(let late) = policy.decide(status: 500, attempt: 70, storedAt: 0, now: 3590) else {
            Issue.record("retrying past give_up_after_s")
            return
        }
        #expect(late.contains("webhooks.give_up_after_s 3600"))
    }

    @Test func retriesOfNotificationsThatFailedTogetherAreSpread() {
        let policy = WebhookRetryPolicy(initialS: 1, maxS: 60, giveUpAfterS: 3600)
        let ids = (0..<200).map { "6f0c2a1e-0000-4000-8000-\(String(format: "%012d", $0))" }
        for attempt in [1, 4, 9] {
            let base = policy.backoff(afterAttempt: attempt)
            let waits = ids.map { policy.backoff(afterAttempt: attempt, jitterKey: $0) }
            // Within 75–125 % of the plain backoff, spread over that range, the same every time.
            #expect(waits.allSatisfy { $0 >= 0.75 * base && $0 < 1.25 * base }, "\(attempt): \(waits.min()!)…\(waits.max()!)")
            #expect(waits.min()! < 0.8 * base && waits.max()! > 1.2 * base)
            #expect(Set(waits.map { ($0 * 1000).rounded() }).count > 150, "waits collide")
            #expect(waits == ids.map { policy.backoff(afterAttempt: attempt, jitterKey: $0) })
        }
        // A retry decision uses the spread wait; the give-up rule still counts from storage.
        let id = ids[0]
        #expect(policy.decide(status: 503, attempt: 4, storedAt: 0, now: 10, jitterKey: id)
                == .retry(at: 10 + policy.backoff(afterAttempt: 4, jitterKey: id)))
    }

    @Test func theQueueIsBoundedAndDropsTheOldest() {
        let queue = WebhookJobQueue(capacity: 2)
        func job(_ id: String, stored: Double, due: Double) -> WebhookJob {
            WebhookJob(id: id, rule: "r", payload: [], attempt: 1, storedAt: stored, due: due)
        }
        #expect(queue.add(job("b", stored: 2, due: 10)) == nil)
        #expect(queue.add(job("a", stored: 1, due: 5)) == nil)
        #expect(queue.add(job("c", stored: 3, due: 0))?.id == "a")
        #expect(queue.count == 2)
        #expect(queue.takeDue(now: 1)?.id == "c")
        #expect(queue.takeDue(now: 1) == nil, "b is not due before 10")
        #expect(queue.takeDue(now: 10)?.id == "b")
    }

    @Test func aNotificationIsPublishedWhenBothMessagesAreAcknowledged() {
        var tracker = PublishTracker()
        tracker.register("n1", messageIDs: [5, 6])
        tracker.register("n2", messageIDs: [7, 8])
        #expect(tracker.acknowledge([5, 99, 7]).isEmpty, "99 is some other message")
        #expect(tracker.acknowledge([6]) == ["n1"])
        #expect(tracker.pendingCount == 1)
        #expect(tracker.acknowledge([8, 6]) == ["n2"])
        #expect(tracker.pendingCount == 0)
    }

    @Test func everyRuleWithAWebhookNeedsASecretAndNoneIsPrinted() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wm-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let yaml = """
        site: s
        gateways: [{ id: g, position: [0, 0] }]
        regions: [{ id: r, gateways: [g] }]
        tracking: { macs: ["aa:bb:cc:dd:ee:ff"] }
        notifications:
          - { id: hello, when: enter, match: { all: true }, webhook: "https://a.example/h" }
          - { id: bye, when: exit, match: { all: true }, webhook: "https://b.example/h" }
          - { id: quiet, when: exit, match: { all: true } }
        """
        let site = try SiteLoader.parse(yaml: yaml).site
        var settings = WebhookSettings()
        #expect(throws: ConfigLayers.ConfigError.self) { try settings.secrets(for: site) }
        do { _ = try settings.secrets(for: site) } catch {
            #expect("\(error)".contains("hello, bye have a webhook but no secret"), "\(error)")
        }
        settings.secret = "a-shared-secret-of-32-characters"
        #expect(try settings.secrets(for: site) == ["hello": settings.secret!, "bye": settings.secret!])

        let file = dir.appendingPathComponent("secrets.yaml").path
        try "hello: hello-secret-0123456789\nbye: short\n".write(toFile: file, atomically: true, encoding: .utf8)
        settings.secretsFile = file
        do {
            _ = try settings.secrets(for: site)
            Issue.record("a short secret is refused")
        } catch {
            #expect("\(error)".contains("the webhook secret of bye is shorter than 16 bytes"))
            #expect(!"\(error)".contains("short\n") && !"\(error)".contains("hello-secret"), "secrets never appear in errors")
        }
        try "hello: hello-secret-0123456789\nnope: whatever-secret-0123\n".write(toFile: file, atomically: true, encoding: .utf8)
        do {
            _ = try settings.secrets(for: site)
            Issue.record("an unknown rule in the secrets file is refused")
        } catch {
            #expect("\(error)".contains("names rule 'nope', which the site file does not have"))
        }
        try "hello: hello-secret-0123456789\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try settings.secrets(for: site) == ["hello": "hello-secret-0123456789", "bye": settings.secret!])
    }
}
