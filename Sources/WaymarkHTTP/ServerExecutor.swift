import Dispatch

/// A task executor on a thread of its own, for a server embedded in a program whose Swift
/// concurrency pool may be busy: the server's tasks (one per connection, each request's handler)
/// prefer this executor, so a scrape is answered even while other work holds every thread of the
/// cooperative pool (the pool has one thread per core; on a 2-core gateway that is two).
///
/// `@unchecked Sendable`: the only state is the serial queue, which is thread-safe.
final class ServerExecutor: TaskExecutor, @unchecked Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
