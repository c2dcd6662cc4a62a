import CMosquitto
import Foundation

/// A libmosquitto client: one owner of one `struct mosquitto *`, closed explicitly with ``close()``.
///
/// ## Threading
/// ``connect(_:)`` starts libmosquitto's own network thread (`mosquitto_loop_start`). That thread
/// reads and writes the socket, reconnects with backoff (``Options/reconnectDelay`` …
/// ``Options/reconnectDelayMax``) and calls the handlers (``onEvent``, ``onPublish``,
/// ``onMessage``, ``onSubscribe``). Handlers must only hand data on (append to a queue, resume a
/// continuation, bump a counter): they must not block and must never call ``close()`` (that joins
/// the very thread they run on). ``publish(topic:payload:qos:retain:)``, ``subscribe(_:qos:)``
/// and ``disconnect()`` may be called from any thread: libmosquitto's API is thread-safe once the
/// loop thread runs (it queues the packet and wakes the loop).
///
/// ## Sendable
/// `@unchecked Sendable`: the only mutable Swift state lives in ``MQTTCallbackBox`` behind its
/// lock, and the C handle is used only through libmosquitto's thread-safe calls (see above) until
/// ``close()``, which callers must not race with other calls (the single-owner rule).
public final class MQTTClient: @unchecked Sendable {
    /// Client behaviour that does not depend on the broker address.
    public struct Options: Sendable, Equatable {
        /// MQTT client id; unique per broker. A persistent session (`cleanSession: false`) needs a stable id.
        public var clientID: String
        /// When false the broker keeps subscriptions and queued QoS 1 messages across reconnects.
        public var cleanSession: Bool
        /// QoS 1/2 messages in flight (sent, not yet acknowledged) at once; more wait in libmosquitto's queue.
        public var maxInflight: Int
        /// Unacknowledged QoS 1/2 messages this client accepts before ``publish(topic:payload:qos:retain:)``
        /// throws ``MQTTError/Kind/queueFull``; 0 means unbounded.
        public var maxQueued: Int
        /// First reconnect delay in seconds, doubled up to ``reconnectDelayMax`` when ``exponentialBackoff``.
        public var reconnectDelay: Int
        public var reconnectDelayMax: Int
        public var exponentialBackoff: Bool

        public init(clientID: String, cleanSession: Bool = true, maxInflight: Int = 20, maxQueued: Int = 1000,
                    reconnectDelay: Int = 1, reconnectDelayMax: Int = 30, exponentialBackoff: Bool = true) {
            self.clientID = clientID
            self.cleanSession = cleanSession
            self.maxInflight = maxInflight
            self.maxQueued = maxQueued
            self.reconnectDelay = reconnectDelay
            self.reconnectDelayMax = reconnectDelayMax
            self.exponentialBackoff = exponentialBackoff
        }
    }

    public let options: Options
    /// nil once closed.
    private var handle: OpaquePointer?
    let box: MQTTCallbackBox
    private var loopStarted = false
    private let closeLock = NSLock()
    /// Signalled when the connector thread (first connection retries) has ended.
    private let connectorDone = DispatchSemaphore(value: 0)
    private var connectorRunning = false

    /// Creates the client (`mosquitto_new`). No network activity until ``connect(_:)``.
    public init(_ options: Options) throws(MQTTError) {
        MQTTLibrary.ensureInitialised()
        self.options = options
        let box = MQTTCallbackBox(maxQueued: options.maxQueued)
        self.box = box
        // The box is retained here and released in close() after mosquitto_destroy, so the
        // network thread can never see a dangling `obj`.
        let obj = Unmanaged.passRetained(box).toOpaque()
        guard let mosq = mosquitto_new(options.clientID, options.cleanSession, obj) else {
            Unmanaged<MQTTCallbackBox>.fromOpaque(obj).release()
            let code = errno
            throw MQTTError(kind: code == EINVAL ? .invalidArgument : .other, call: "mosquitto_new", code: code,
                            message: String(cString: strerror(code)),
                            hint: code == EINVAL ? "a persistent session (cleanSession: false) needs a non-empty client id"
                                                 : "out of memory", errno: code)
        }
        self.handle = mosq
        box.handle = mosq
        do {
            try MQTTError.check("mosquitto_max_inflight_messages_set",
                                mosquitto_max_inflight_messages_set(mosq, UInt32(clamping: options.maxInflight)))
            try MQTTError.check("mosquitto_reconnect_delay_set",
                                mosquitto_reconnect_delay_set(mosq, UInt32(clamping: max(1, options.reconnectDelay)),
                                                              UInt32(clamping: max(options.reconnectDelay, options.reconnectDelayMax)),
                                                              options.exponentialBackoff))
        } catch {
            close()
            throw error
        }
        installCallbacks(mosq)
    }

    deinit {
        if handle != nil {
            // A leak of an open connection is a bug in the owner; say so loudly, then clean up.
            FileHandle.standardError.write(Data("WaymarkMQTT: MQTTClient '\(options.clientID)' was released without close(); closing it now\n".utf8))
            close()
        }
    }

    /// The linked libmosquitto version, e.g. `2.0.11`.
    public static var libraryVersion: String { MQTTLibrary.version }

    /// True between a CONNACK accepted and the next disconnect.
    public var isConnected: Bool { box.isConnected }

    /// QoS 1/2 messages published but not yet acknowledged by the broker.
    public var unacknowledgedCount: Int { box.unacknowledgedCount }

    /// Connection events (connected, refused, disconnected). Set before ``connect(_:)``.
    public var onEvent: (@Sendable (MQTTEvent) -> Void)? {
        get { box.handlers.onEvent } set { box.setHandler { $0.onEvent = newValue } }
    }
    /// The broker acknowledged message `id` (PUBACK for QoS 1; sent for QoS 0).
    public var onPublish: (@Sendable (_ id: Int32) -> Void)? {
        get { box.handlers.onPublish } set { box.setHandler { $0.onPublish = newValue } }
    }
    /// A message arrived on a subscription.
    public var onMessage: (@Sendable (MQTTMessage) -> Void)? {
        get { box.handlers.onMessage } set { box.setHandler { $0.onMessage = newValue } }
    }
    /// SUBACK for subscription `id` with the granted QoS (128 = refused by the broker's ACL).
    public var onSubscribe: (@Sendable (_ id: Int32, _ grantedQoS: [Int]) -> Void)? {
        get { box.handlers.onSubscribe } set { box.setHandler { $0.onSubscribe = newValue } }
    }

    func liveHandle(_ call: String) throws(MQTTError) -> OpaquePointer {
        guard let handle else {
            throw MQTTError(kind: .closed, call: call, code: 0, message: "the client is closed",
                            hint: "create a new MQTTClient; a closed one cannot be reused")
        }
        return handle
    }

    /// Disconnects (if connected), stops the network thread and frees the handle. Idempotent.
    /// Must not be called from a handler.
    public func close() {
        box.markClosing()
        if closeLock.withLock({ connectorRunning }) { connectorDone.wait() }
        closeLock.lock()
        defer { closeLock.unlock() }
        guard let mosq = handle else { return }
        _ = mosquitto_disconnect(mosq)
        if loopStarted {
            // Not forced: the thread leaves its loop after the disconnect request (also while it
            // waits between reconnect attempts, which loop_stop interrupts).
            _ = mosquitto_loop_stop(mosq, false)
            loopStarted = false
        }
        mosquitto_destroy(mosq)
        handle = nil
        box.handle = nil
        Unmanaged.passUnretained(box).release()
    }

    func markLoopStarted() { closeLock.withLock { loopStarted = true } }
    var isLoopStarted: Bool { closeLock.withLock { loopStarted || connectorRunning } }

    func connectorStarted() { closeLock.withLock { connectorRunning = true } }

    func connectorFinished() {
        let wasRunning = closeLock.withLock { () -> Bool in
            defer { connectorRunning = false }
            return connectorRunning
        }
        if wasRunning { connectorDone.signal() }
    }

    /// Starts the network loop unless the client is being closed (called by the connector thread).
    func startLoopIfOpen(_ mosq: OpaquePointer) {
        closeLock.withLock {
            guard handle != nil, !box.isClosing else { return }
            if mosquitto_loop_start(mosq) == MOSQ_ERR_SUCCESS.rawValue { loopStarted = true }
        }
    }
}
