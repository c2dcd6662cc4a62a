import Foundation
import WaymarkBluetooth

/// `--source hci0` / `hci:AA:BB:CC:DD:EE:FF`: live LE scanning through WaymarkBluetooth's
/// ``HCIScanner`` (libbluetooth raw HCI socket). Each LE Meta event is handed to the sink with the
/// wall-clock time of its arrival; the scanner's own recovery (adapter reset, unplugged, taken
/// down) shows up as ``SourceState/off`` until it scans again.
///
/// `@unchecked Sendable`: `scanner` is immutable and thread-safe; the stop semaphore is too.
public final class HCISource: SightingSource, @unchecked Sendable {
    public let scanner: HCIScanner
    private let stopSignal = DispatchSemaphore(value: 0)

    public init(adapter: AdapterSelector, parameters: ScanParameters) {
        self.scanner = HCIScanner(adapter: adapter, parameters: parameters)
    }

    public var name: String { scanner.adapter.description }
    public var usesWallClock: Bool { true }

    public func run(into sink: any SightingSink) throws {
        sink.sourceStateChanged(.starting)
        do {
            try scanner.start(
                onEvent: { bytes in
                    let now = Date().timeIntervalSince1970
                    bytes.withUnsafeBytes { sink.deliver(hciEvent: $0, time: now) }
                },
                onStateChange: { state in
                    switch state {
                    case .scanning: sink.sourceStateChanged(.on)
                    case .recovering: sink.sourceStateChanged(.off)
                    case .idle, .stopped: break
                    }
                })
        } catch {
            throw SourceError("cannot scan on \(scanner.adapter): \(error)")
        }
        stopSignal.wait()
        scanner.stop()
        sink.sourceStateChanged(.off)
    }

    public func stop() { stopSignal.signal() }
}

extension EdgeConfig {
    /// The source this configuration names.
    public func makeSource() throws -> any SightingSource {
        let parameters = ScanParameters(active: scanActive, intervalMs: scanIntervalMS, windowMs: scanWindowMS)
        switch source {
        case .adapter(let name):
            return HCISource(adapter: .name(name), parameters: parameters)
        case .adapterAddress(let address):
            return HCISource(adapter: .address(address), parameters: parameters)
        case .replay(let path):
            return ReplaySource(path: path, rate: replayRate, eventInterval: replayEventIntervalMS / 1000, paceStart: replayStartAt)
        }
    }
}
