import Foundation

/// One notification on its way to a webhook.
struct WebhookJob: Sendable {
    var id: String
    var rule: String
    var payload: [UInt8]
    /// The next attempt's number (1 for the first).
    var attempt: Int
    /// When the notification was stored (give-up is counted from here).
    var storedAt: Double
    /// Not before this time (Unix seconds): the backoff.
    var due: Double
}

/// The bounded queue of webhook deliveries (`webhooks.queue_size`), shared by the delivery
/// thread (which adds) and the dispatcher's tasks (which take due jobs and put retries back).
/// When full, the job stored longest ago is dropped and returned to the caller to record.
///
/// `@unchecked Sendable`: all state is under `lock`, which is never held across an await.
final class WebhookJobQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var jobs: [WebhookJob] = []
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    var count: Int {
        lock.lock(); defer { lock.unlock() }
        return jobs.count
    }

    /// Adds `job`; returns the job dropped to make room, if any (possibly `job` itself when it is
    /// the oldest).
    func add(_ job: WebhookJob) -> WebhookJob? {
        lock.lock(); defer { lock.unlock() }
        jobs.append(job)
        guard jobs.count > capacity else { return nil }
        var oldest = 0
        for i in jobs.indices where (jobs[i].storedAt, jobs[i].id) < (jobs[oldest].storedAt, jobs[oldest].id) { oldest = i }
        return jobs.remove(at: oldest)
    }

    /// Removes and returns the job due earliest, if it is due at `now`.
    func takeDue(now: Double) -> WebhookJob? {
        lock.lock(); defer { lock.unlock() }
        guard let i = jobs.indices.min(by: { jobs[$0].due < jobs[$1].due }), jobs[i].due <= now else { return nil }
        return jobs.remove(at: i)
    }
}
