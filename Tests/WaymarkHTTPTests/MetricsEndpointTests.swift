import Foundation
import HTTPTestSupport
import NIOCore
import Prometheus
import Testing
import WaymarkHTTP

/// The metrics endpoint itself (the type both services run): it answers scrapes while other
/// clients hold connections open or trickle requests in, and it closes those after its idle timeout.
@Suite("Metrics endpoint", .serialized)
struct MetricsEndpointTests {
    static func endpoint(limits: HTTPLimits = .metrics) async throws -> MetricsEndpoint {
        let registry = PrometheusCollectorRegistry()
        registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "waymark", subsystem: "test", metricName: "scrapes", unitName: "total", helpText: "Test counter.")).increment(by: Int64(3))
        let endpoint = MetricsEndpoint(registry: registry, host: "127.0.0.1", port: 0, limits: limits)
        try await endpoint.start()
        return endpoint
    }

    @Test func servesThePrometheusTextAndNothingElse() async throws {
        let endpoint = try await Self.endpoint()
        let port = endpoint.port
        #expect(port > 0)
        let scrape = try await Task.detached { try RawHTTPClient.get(port: port, path: "/metrics", timeout: 10) }.value
        #expect(scrape.status == 200)
        #expect(scrape.headers.lowercased().contains("content-type: text/plain; version=0.0.4"))
        #expect(scrape.body.contains("waymark_test_scrapes_total 3"), "\(scrape.body)")
        let other = try await Task.detached { try RawHTTPClient.get(port: port, path: "/", timeout: 10) }.value
        #expect(other.status == 404)
        await endpoint.stop()
        // The port is released on stop: nothing answers on it, or (the kernel may hand a free port
        // to a concurrent test's server at once) whatever answers now is not this endpoint.
        let after = try? await Task.detached { try RawHTTPClient.get(port: port, path: "/metrics", timeout: 5) }.value
        #expect(after.map { !$0.body.contains("waymark_test_scrapes_total 3") } ?? true, "the stopped endpoint still answers: \(after?.body ?? "")")
    }

    @Test func scrapesAnswerWithinASecondWhileFiftyIdleAndFiveSlowClientsHoldConnections() async throws {
        let endpoint = try await Self.endpoint()
        defer { Task { await endpoint.stop() } }
        let port = endpoint.port
        let latencies = try await Task.detached { () throws -> [Double] in
            // A first scrape before the crowd arrives (the event loops start, code is paged in:
            // seconds on a loaded machine); the ones measured come after.
            #expect(try RawHTTPClient.get(port: port, path: "/metrics", timeout: 10).status == 200)
            let crowd = try RawHTTPClient.Crowd(port: port, idle: 50, slow: 5)
            defer { crowd.close() }
            var out: [Double] = []
            for _ in 0..<10 {
                let r = try RawHTTPClient.get(port: port, path: "/metrics", timeout: 1)
                #expect(r.status == 200)
                out.append(r.seconds)
            }
            return out
        }.value
        #expect(latencies.count == 10 && latencies.allSatisfy { $0 < 1 }, "scrape seconds: \(latencies)")
        print("metrics endpoint: 10 scrapes with 50 idle + 5 slow connections, slowest \(String(format: "%.3f", latencies.max() ?? 0)) s")
    }

    /// The server's tasks run on their own executor: with every thread of Swift's cooperative pool
    /// busy (work that never suspends), a scrape from a plain thread is still answered at once.
    @Test func scrapesAreAnsweredWhileTheConcurrencyPoolIsBusy() async throws {
        let endpoint = try await Self.endpoint()
        defer { Task { await endpoint.stop() } }
        let port = endpoint.port
        final class Outcome: @unchecked Sendable {
            // @unchecked: written by the scraping thread before `done` is signalled, read after.
            var seconds: Double?
            var error: String?
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        let spinUntil = Date().addingTimeInterval(3)
        let busy = (0..<max(2, ProcessInfo.processInfo.activeProcessorCount)).map { _ in
            Task.detached { while Date() < spinUntil {} }
        }
        let scraper = Thread {
            Thread.sleep(forTimeInterval: 0.5)  // the spinning tasks hold the pool by now
            do { outcome.seconds = try RawHTTPClient.get(port: port, path: "/metrics", timeout: 1).seconds } catch {
                outcome.error = "\(error)"
            }
            outcome.done.signal()
        }
        scraper.start()
        for task in busy { await task.value }
        outcome.done.wait()
        #expect(outcome.error == nil && (outcome.seconds ?? 9) < 1, "scrape while the pool was busy: \(outcome.error ?? "") \(outcome.seconds ?? -1) s")
    }

    @Test func idleAndTricklingConnectionsAreClosedAfterTheIdleTimeout() async throws {
        let endpoint = try await Self.endpoint(limits: HTTPLimits(idleTimeout: .milliseconds(500), maxConnections: 64))
        defer { Task { await endpoint.stop() } }
        let port = endpoint.port
        let closed = try await Task.detached { () throws -> Int in
            // A byte every 0.3 s: the request head would take about 25 s to arrive.
            let crowd = try RawHTTPClient.Crowd(port: port, idle: 4, slow: 2, slowInterval: 0.3)
            defer { crowd.close() }
            // Polled for up to 20 s (a loaded machine may take longer than the timeout to get
            // there): still well before the trickled heads could arrive, so a server without the
            // idle timeout would keep all six open to the end.
            let deadline = Date().addingTimeInterval(20)
            while crowd.closedByServer() < 6 && Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
            return crowd.closedByServer()
        }.value
        #expect(closed == 6, "connections the server closed after its 0.5 s idle timeout")
    }

    @Test func aTakenPortIsAClearError() async throws {
        let first = try await Self.endpoint()
        defer { Task { await first.stop() } }
        let second = MetricsEndpoint(registry: PrometheusCollectorRegistry(), host: "127.0.0.1", port: first.port)
        do {
            try await second.start()
            Issue.record("a second server on the same port started")
        } catch {
            #expect("\(error)".contains("cannot listen on 127.0.0.1:\(first.port)") && "\(error)".contains("choose another port"), "\(error)")
        }
    }
}
