import Foundation
import WaymarkCore
import WaymarkService

/// The queue between the MQTT thread and the fusion thread, with `workers` threads that decode
/// sighting batches while they wait in it: decoding is most of the cost of a batch (see
/// `waymark-bench aggregator-core`), and it needs no shared state, so it can use the other cores
/// while the fusion thread fuses. Messages still reach the fusion thread one at a time in arrival
/// order, and the fusion thread decides everything as before; with `workers` 0 it decodes itself.
///
/// Each message is claimed once, by a worker or by the fusion thread if it gets there first (then
/// it decodes it itself rather than wait), so a slow or stopped worker never holds intake up.
///
/// `@unchecked Sendable`: a slot's state is guarded by the stage's `condition`; the queues lock.
public final class DecodeStage: @unchecked Sendable {
    /// A message as the MQTT thread received it.
    public struct Message: Sendable {
        public var topic: String
        public var payload: [UInt8]
        public var retained: Bool
        public var receivedAt: Double

        public init(topic: String, payload: [UInt8], retained: Bool, receivedAt: Double) {
            self.topic = topic
            self.payload = payload
            self.retained = retained
            self.receivedAt = receivedAt
        }
    }

    final class Slot: @unchecked Sendable {
        enum State { case waiting, claimed, done }
        let message: Message
        var state = State.waiting
        var prepared: PreparedBatch?
        init(_ message: Message) { self.message = message }
    }

    public let workers: Int
    private let ordered: BlockingQueue<Slot>
    private let work: BlockingQueue<Slot>
    private let condition = NSCondition()
    private let preparer: BatchPreparer
    private var started = false
    private let finished = DispatchGroup()
    private var decodedAheadStorage = 0

    /// `capacity` messages at most wait (the MQTT thread blocks beyond, slowing the broker
    /// connection); `preparer` is copied to each worker (each keeps its own device-id cache).
    public init(capacity: Int, workers: Int, preparer: BatchPreparer) {
        self.workers = max(0, workers)
        self.preparer = preparer
        ordered = BlockingQueue(capacity: capacity)
        work = BlockingQueue(capacity: Int.max)
    }

    /// Starts the workers (once); until then, and with 0 workers, the fusion thread decodes.
    public func start() {
        condition.lock()
        defer { condition.unlock() }
        guard !started else { return }
        started = true
        for i in 0..<workers {
            finished.enter()
            let thread = Thread { [self, preparer] in
                ThreadName.set("wm-decode-\(i + 1)")
                var preparer = preparer
                while true {
                    if let slot = work.pop(timeout: 1) { decode(slot, with: &preparer) } else if work.isClosed { break }
                }
                finished.leave()
            }
            thread.start()
        }
    }

    /// Called by the MQTT thread: queues the message (blocking while `capacity` wait). False once closed.
    @discardableResult
    public func push(_ message: Message) -> Bool {
        let slot = Slot(message)
        guard ordered.push(slot) else { return false }
        if workers > 0 { work.push(slot) }  // never blocks; skipped if not started
        return true
    }

    /// Called by the fusion thread: the oldest message and its decoded batch (nil if the batch was
    /// not decoded ahead: the core then decodes it), waiting at most `timeout` seconds for one;
    /// nil on timeout or once closed and drained.
    public func pop(timeout: Double) -> (Message, PreparedBatch?)? {
        guard let slot = ordered.pop(timeout: timeout) else { return nil }
        condition.lock()
        defer { condition.unlock() }
        switch slot.state {
        case .waiting:
            slot.state = .claimed  // a worker that pops it later skips it
            return (slot.message, nil)
        case .claimed:
            while slot.state != .done { condition.wait() }
            return (slot.message, slot.prepared)
        case .done:
            return (slot.message, slot.prepared)
        }
    }

    /// Messages waiting for the fusion thread.
    public var count: Int { ordered.count }

    /// Batches the workers decoded before the fusion thread needed them (for the benchmark).
    public var decodedAhead: Int {
        condition.lock(); defer { condition.unlock() }
        return decodedAheadStorage
    }

    /// No more messages: pushes fail, pops drain what is queued, the workers stop.
    public func close() {
        ordered.close()
        work.close()
    }

    /// Waits for the workers to stop (after `close()`).
    public func join() { finished.wait() }

    private func decode(_ slot: Slot, with preparer: inout BatchPreparer) {
        condition.lock()
        guard slot.state == .waiting else { condition.unlock(); return }
        slot.state = .claimed
        condition.unlock()
        let prepared = preparer.prepare(topic: slot.message.topic, payload: slot.message.payload)
        condition.lock()
        slot.prepared = prepared
        slot.state = .done
        decodedAheadStorage += 1
        condition.broadcast()
        condition.unlock()
    }
}
