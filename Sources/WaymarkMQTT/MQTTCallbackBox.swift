import CMosquitto
import Foundation

/// The state shared between an ``MQTTClient``'s owner and libmosquitto's network thread; passed
/// to libmosquitto as the `obj` user-data pointer (retained by the client until after
/// `mosquitto_destroy`).
///
/// `@unchecked Sendable`: every mutable field is read and written under `condition`'s lock;
/// `handle` is written only by the owner before the loop starts and after it stops.
final class MQTTCallbackBox: @unchecked Sendable {
    struct Handlers {
        var onEvent: (@Sendable (MQTTEvent) -> Void)?
        var onPublish: (@Sendable (Int32) -> Void)?
        var onMessage: (@Sendable (MQTTMessage) -> Void)?
        var onSubscribe: (@Sendable (Int32, [Int]) -> Void)?
    }

    private let condition = NSCondition()
    private var _handlers = Handlers()
    private var connected = false
    private var closing = false
    private var refusal: MQTTError?
    private var _firstFailure: MQTTError?
    private var unacknowledged = Set<Int32>()
    /// Subscriptions to renew after each reconnect (a clean session forgets them).
    private var subscriptions: [String: Int] = [:]
    let maxQueued: Int
    var handle: OpaquePointer?
    var context = ""

    init(maxQueued: Int) { self.maxQueued = maxQueued }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    var handlers: Handlers { locked { _handlers } }
    func setHandler(_ change: (inout Handlers) -> Void) { locked { change(&_handlers) } }
    var isConnected: Bool { locked { connected } }
    var unacknowledgedCount: Int { locked { unacknowledged.count } }
    func markClosing() { locked { closing = true } }
    var isClosing: Bool { locked { closing } }
    func recordFirstFailure(_ error: MQTTError) { locked { if _firstFailure == nil { _firstFailure = error } } }
    var firstFailure: MQTTError? { locked { _firstFailure } }
    func remember(subscription: String, qos: Int) { locked { subscriptions[subscription] = qos } }
    func forget(subscription: String) { _ = locked { subscriptions.removeValue(forKey: subscription) } }

    /// Runs `publish` (which returns the message id) under the lock and records the id, so that a
    /// PUBACK racing ahead of the caller is matched correctly. libmosquitto's threaded publish only
    /// queues the packet and never calls back into us, so holding the lock here cannot deadlock.
    func publishing(qos: Int, _ publish: () throws(MQTTError) -> Int32) throws(MQTTError) -> Int32 {
        condition.lock()
        defer { condition.unlock() }
        if qos > 0, maxQueued > 0, unacknowledged.count >= maxQueued {
            throw MQTTError(kind: .queueFull, call: "mosquitto_publish", code: 0,
                            message: "\(unacknowledged.count) messages await the broker's acknowledgement",
                            hint: "the broker is slow or unreachable (\(context)); retry later or raise maxQueued")
        }
        let id = try publish()
        if qos > 0 { unacknowledged.insert(id) }
        return id
    }

    /// Blocks until CONNACK (true), a refusal (throws) or the timeout (false).
    func waitForConnection(timeout: Double) throws(MQTTError) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !connected {
            if let refusal { throw refusal }
            if !condition.wait(until: deadline) { return connected }
        }
        return true
    }

    // MARK: Called on libmosquitto's network thread

    func didConnect(_ rc: Int32) {
        let (handler, renew): ((@Sendable (MQTTEvent) -> Void)?, [String: Int]) = locked {
            if rc == 0 { connected = true; refusal = nil } else { refusal = MQTTError.refused(connack: rc, context: context) }
            condition.broadcast()
            return (_handlers.onEvent, rc == 0 ? subscriptions : [:])
        }
        if let mosq = handle {
            for (pattern, qos) in renew { _ = mosquitto_subscribe(mosq, nil, pattern, Int32(qos)) }
        }
        handler?(rc == 0 ? .connected : .refused(MQTTError.refused(connack: rc, context: context)))
    }

    func didDisconnect(_ rc: Int32) {
        let (handler, expected): ((@Sendable (MQTTEvent) -> Void)?, Bool) = locked {
            connected = false
            condition.broadcast()
            return (_handlers.onEvent, rc == 0 || closing)
        }
        let reason = rc == 0 ? "disconnected by the client" : String(cString: mosquitto_strerror(rc))
        handler?(.disconnected(expected: expected, reason: reason))
    }

    func didPublish(_ id: Int32) {
        let handler = locked { () -> (@Sendable (Int32) -> Void)? in
            unacknowledged.remove(id)
            return _handlers.onPublish
        }
        handler?(id)
    }

    func didReceive(_ message: MQTTMessage) { handlers.onMessage?(message) }

    func didSubscribe(_ id: Int32, _ granted: [Int]) { handlers.onSubscribe?(id, granted) }
}
