import Foundation

/// A FIFO between threads, bounded by a total weight (messages, rows …): `push` blocks while
/// the queue is full (back-pressure to the producer), `pop` waits up to a timeout.
///
/// `@unchecked Sendable`: all state is guarded by `condition`.
final class BlockingQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [(Element, Int)] = []
    private var head = 0
    private(set) var weight = 0
    let capacity: Int
    private var closed = false

    init(capacity: Int) { self.capacity = capacity }

    var count: Int {
        condition.lock(); defer { condition.unlock() }
        return items.count - head
    }

    var currentWeight: Int {
        condition.lock(); defer { condition.unlock() }
        return weight
    }

    var isClosed: Bool {
        condition.lock(); defer { condition.unlock() }
        return closed
    }

    /// Appends `item`; blocks while the queue holds `capacity` or more (an item heavier than the
    /// capacity is still accepted into an empty queue). Returns false when the queue was closed.
    @discardableResult
    func push(_ item: Element, weight w: Int = 1) -> Bool {
        condition.lock(); defer { condition.unlock() }
        while !closed && weight > 0 && weight + w > capacity { condition.wait() }
        guard !closed else { return false }
        items.append((item, w))
        weight += w
        condition.broadcast()
        return true
    }

    /// The oldest item, waiting at most `timeout` seconds; nil on timeout or when closed and empty.
    func pop(timeout: Double) -> Element? {
        condition.lock(); defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while head == items.count {
            if closed { return nil }
            if !condition.wait(until: deadline) { break }
        }
        guard head < items.count else { return nil }
        let (item, w) = items[head]
        head += 1
        weight -= w
        if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return item
    }

    /// Wakes every waiter; pushes fail from now on, pops drain what is left.
    func close() {
        condition.lock(); defer { condition.unlock() }
        closed = true
        condition.broadcast()
    }
}
