import Foundation
import Synchronization

/// Scans for Bluetooth LE advertisements on one local adapter through a raw HCI socket
/// (libbluetooth), delivering every HCI LE Meta event the controller sends.
///
/// ```swift
/// let scanner = HCIScanner(adapter: .name("hci0"), parameters: ScanParameters(active: false))
/// try scanner.start(onEvent: { event in decoder.feed(event) },
///                   onStateChange: { state in status.scan = state.name })
/// …
/// scanner.stop()
/// ```
///
/// - Events are H4 packets: `04 3E len subevent …` (the packet type byte 0x04, then the LE Meta
///   event), exactly what `HCIEventDecoder.decode` accepts. Subevent 0x02 carries legacy reports,
///   0x0D extended ones (when the controller supports extended scanning, see `ScanMode`); other
///   LE Meta subevents pass through too and are the consumer's to ignore.
/// - `onEvent` runs on the scanner's own thread, one event at a time; keep it short (decode and
///   hand on). `onStateChange` runs on the same thread. Never call `stop()` from either callback:
///   `stop()` waits for that thread to finish.
/// - `start` returns once scanning is on, or throws a `BluetoothError` saying why it could not
///   start (no adapter, adapter down, missing capabilities, another scanner, controller error).
/// - Afterwards the scanner watches the adapter: when it disappears, goes down, is reset, or a
///   read fails, it reports `.recovering`, closes the socket and reopens it with backoff
///   (`RecoveryPolicy`), re-applying the parameters, until it scans again or is stopped.
/// - `stop` disables scanning, restores the socket's previous HCI filter, closes it and returns
///   within about `RecoveryPolicy.pollTimeoutMs` plus one command round trip. The adapter is left
///   as it was found: up, not scanning (the scanner never starts on an adapter that is already
///   scanning — the controller refuses with Command Disallowed, reported as `scan-conflict`).
public final class HCIScanner: Sendable {
    public let adapter: AdapterSelector
    public let parameters: ScanParameters
    public let recovery: RecoveryPolicy
    private let running = Mutex<Running?>(nil)
    private let lastState = Mutex<ScanState>(.idle)

    public init(
        adapter: AdapterSelector = .default, parameters: ScanParameters = ScanParameters(),
        recovery: RecoveryPolicy = RecoveryPolicy()
    ) {
        self.adapter = adapter
        self.parameters = parameters
        self.recovery = recovery
    }

    /// The latest state.
    public var state: ScanState { running.withLock { $0?.control.state } ?? lastState.withLock { $0 } }

    /// Opens the adapter, applies the parameters, enables scanning and starts the read thread.
    public func start(
        onEvent: @escaping @Sendable ([UInt8]) -> Void,
        onStateChange: @escaping @Sendable (ScanState) -> Void = { _ in }
    ) throws(BluetoothError) {
        try parameters.validate()
        let control = ScanControl(onState: onStateChange)
        let claimed = running.withLock { current -> Bool in
            guard current == nil else { return false }
            current = Running(control: control)
            return true
        }
        guard claimed else {
            throw BluetoothError(.invalidConfiguration, "the scanner on \(adapter) is already started; call stop() first")
        }
        let (selector, parameters, recovery) = (adapter, self.parameters, self.recovery)
        let thread = Thread {
            let session = HCIScanSession(
                selector: selector, parameters: parameters, policy: recovery, control: control, onEvent: onEvent)
            session.run()
            control.finished.signal()
        }
        thread.name = "waymark-hci-scan"
        thread.start()
        control.started.wait()
        if let failure = control.startFailure.withLock({ $0 }) {
            control.finished.wait()
            running.withLock { $0 = nil }
            throw failure
        }
    }

    /// Disables scanning, restores the adapter's and socket's previous state, and waits for the
    /// read thread to end. Does nothing when not started.
    public func stop() {
        guard let current = running.withLock({ r -> Running? in defer { r = nil }; return r }) else { return }
        current.control.stopRequested.store(true, ordering: .releasing)
        current.control.finished.wait()
        lastState.withLock { $0 = current.control.state }
    }

    private struct Running: Sendable {
        let control: ScanControl
    }
}

/// What the caller's thread and the scan thread share.
///
/// Sendable: the stop flag is atomic, state and the start result are behind mutexes, and the
/// semaphores are thread-safe; the callback is @Sendable.
final class ScanControl: Sendable {
    let stopRequested = Atomic<Bool>(false)
    let started = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let startFailure = Mutex<BluetoothError?>(nil)
    private let current = Mutex<ScanState>(.idle)
    private let onState: @Sendable (ScanState) -> Void

    init(onState: @escaping @Sendable (ScanState) -> Void) { self.onState = onState }

    var state: ScanState { current.withLock { $0 } }
    var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    func set(_ state: ScanState) {
        current.withLock { $0 = state }
        onState(state)
    }
}
