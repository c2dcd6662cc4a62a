import Foundation
import WaymarkMQTT

/// Messages handed from libmosquitto's network thread to a service's loop thread, with the time
/// they arrived. Bounded: beyond `capacity` the oldest are dropped and counted (a bridge has no
/// spool; holding the network thread back would only delay everything else).
///
/// `@unchecked Sendable`: all state is guarded by `condition`.
final class MessageInbox: @unchecked Sendable {
    struct Item: Sendable {
        var message: MQTTMessage
        var receivedAt: Double
    }

    private let condition = NSCondition()
    private var items: [Item] = []
    private var head = 0
    private(set) var droppedStorage = 0
    let capacity: Int

    init(capacity: Int = 50_000) { self.capacity = capacity }

    /// Called on the network thread: never blocks.
    func push(_ message: MQTTMessage) {
        let item = Item(message: message, receivedAt: Date().timeIntervalSince1970)
        condition.lock()
        if items.count - head >= capacity {
            head += 1
            droppedStorage += 1
        }
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    /// The next message, waiting up to `timeout` seconds; nil when none came.
    func pop(timeout: Double) -> Item? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while head == items.count {
            if !condition.wait(until: deadline) { break }
        }
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }

    /// Messages dropped because the loop fell `capacity` behind.
    var dropped: Int {
        condition.lock(); defer { condition.unlock() }
        return droppedStorage
    }
}
