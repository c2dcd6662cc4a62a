import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// POSTs notifications to their rules' webhooks with AsyncHTTPClient: `webhooks.concurrency`
/// tasks take due jobs from the bounded `WebhookJobQueue`, sign each request, and report every
/// attempt through `onAttempt` (the delivery thread records it in PostgreSQL). Failed attempts go
/// back into the queue with the backoff of `WebhookRetryPolicy`. Nothing here blocks a thread:
/// the HTTP client runs on its own event loops and the tasks on Swift's cooperative pool.
final class WebhookDispatcher: Sendable {
    /// What one attempt came to.
    struct Attempt: Sendable {
        var id: String
        var attempt: Int
        var startedAt: Double
        var durationMS: Double
        var httpStatus: Int?
        /// delivered, retry or failed.
        var outcome: String
        var error: String?
    }

    /// Where each rule's notifications go, with its signing secret.
    struct Target: Sendable {
        var url: String
        var secret: String
    }

    let queue: WebhookJobQueue
    private let client: HTTPClient
    private let targets: [String: Target]
    private let policy: WebhookRetryPolicy
    private let timeoutS: Double
    private let concurrency: Int
    private let onAttempt: @Sendable (Attempt) -> Void
    private let onDropped: @Sendable (WebhookJob) -> Void
    private let logger: Logger
    private let workers = LockedTasks()

    init(settings: WebhookSettings, targets: [String: Target], logger: Logger,
         onAttempt: @escaping @Sendable (Attempt) -> Void, onDropped: @escaping @Sendable (WebhookJob) -> Void) {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(min(settings.timeoutS, 10) * 1000)),
                           read: .milliseconds(Int64(settings.timeoutS * 1000))))
        configuration.decompression = .disabled
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        queue = WebhookJobQueue(capacity: settings.queueSize)
        self.targets = targets
        policy = WebhookRetryPolicy(settings)
        timeoutS = settings.timeoutS
        concurrency = settings.concurrency
        self.onAttempt = onAttempt
        self.onDropped = onDropped
        self.logger = logger
    }

    /// Whether the site has a webhook for `rule`.
    func hasTarget(_ rule: String) -> Bool { targets[rule] != nil }

    /// Queues a delivery (never blocks); a job pushed out of the full queue goes to `onDropped`.
    func enqueue(_ job: WebhookJob) {
        if let dropped = queue.add(job) { onDropped(dropped) }
    }

    /// Starts the worker tasks.
    func start() {
        for _ in 0..<concurrency {
            workers.add(Task { [self] in await work() })
        }
    }

    /// Stops the workers (a request in flight is abandoned: its notification stays `pending` and
    /// is sent again at the next start) and shuts the HTTP client down.
    func shutdown() async {
        workers.cancelAll()
        try? await client.shutdown()
    }

    private func work() async {
        while !Task.isCancelled {
            guard let job = queue.takeDue(now: Date().timeIntervalSince1970) else {
                try? await Task.sleep(for: .milliseconds(100))
                continue
            }
            await deliver(job)
        }
    }

    private func deliver(_ job: WebhookJob) async {
        guard let target = targets[job.rule] else { return }
        let started = Date().timeIntervalSince1970
        var status: Int?
        var problem: String?
        do {
            var request = HTTPClientRequest(url: target.url)
            request.method = .POST
            let timestamp = String(Int64(started))
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "User-Agent", value: "waymark-aggregator")
            request.headers.add(name: WebhookSigner.idHeader, value: job.id)
            request.headers.add(name: WebhookSigner.attemptHeader, value: String(job.attempt))
            request.headers.add(name: WebhookSigner.timestampHeader, value: timestamp)
            request.headers.add(name: WebhookSigner.signatureHeader,
                                value: WebhookSigner.signature(secret: target.secret, timestamp: timestamp, body: job.payload))
            request.body = .bytes(ByteBuffer(bytes: job.payload))
            let response = try await client.execute(request, timeout: .milliseconds(Int64(timeoutS * 1000)))
            status = Int(response.status.code)
            let body = try await response.body.collect(upTo: 64 * 1024)
            if !(200..<300).contains(Int(response.status.code)) {
                let start = String(decoding: body.readableBytesView.prefix(200), as: UTF8.self)
                problem = "HTTP \(response.status.code)" + (start.isEmpty ? "" : ": \(start)")
            }
        } catch {
            problem = Self.describe(error)
        }
        let now = Date().timeIntervalSince1970
        var attempt = Attempt(id: job.id, attempt: job.attempt, startedAt: started, durationMS: (now - started) * 1000,
                              httpStatus: status, outcome: "delivered", error: problem)
        switch policy.decide(status: status, attempt: job.attempt, storedAt: job.storedAt, now: now, jitterKey: job.id) {
        case .delivered:
            break
        case .retry(let at):
            attempt.outcome = "retry"
            var next = job
            next.attempt += 1
            next.due = at
            enqueue(next)
        case .failed(let reason):
            attempt.outcome = "failed"
            attempt.error = [problem, reason].compactMap { $0 }.joined(separator: "; ")
            logger.warning("webhook delivery given up", metadata: ["rule": .string(job.rule), "reason": .string(reason)])
        }
        onAttempt(attempt)
    }

    /// An error without the request's URL or headers (they may carry tokens in query strings).
    static func describe(_ error: any Error) -> String {
        if let e = error as? HTTPClientError {
            switch e {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "timed out"
            case .remoteConnectionClosed: return "the receiver closed the connection"
            default: return "\(e)"
            }
        }
        return String(describing: error).prefix(300).description
    }
}

/// The worker tasks, cancellable from any thread.
final class LockedTasks: @unchecked Sendable {
    private let lock = NSLock()
    private var tasks: [Task<Void, Never>] = []

    func add(_ task: Task<Void, Never>) {
        lock.lock(); defer { lock.unlock() }
        tasks.append(task)
    }

    func cancelAll() {
        lock.lock(); defer { lock.unlock() }
        tasks.forEach { $0.cancel() }
        tasks.removeAll()
    }
}
