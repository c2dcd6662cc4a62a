import ArgumentParser
import Foundation
import Synchronization
import WaymarkAdvertising
import WaymarkJSON
import WaymarkBluetooth

/// `waymark-edge scan`: scan a local adapter and print every advertising report as a JSON line — the
/// operator's "is my adapter hearing beacons?" check, and the HCI scanner's test harness.
struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Scan a Bluetooth adapter and print each advertising report as a JSON line.",
        discussion: """
            Each line is {"time": seconds since 1970, "format": "legacy"|"extended", then the fields of \
            `waymark decode`} (address, rssi, data, ad, beacon, device_id …). An event that does not \
            decode prints {"time", "error": {"code", "message"}, "hex"}. Scanner state changes and a \
            summary go to stderr. Stops after --seconds, or on SIGINT/SIGTERM, and switches scanning off \
            again. Needs CAP_NET_RAW and CAP_NET_ADMIN (or root). Prints device addresses: it is a \
            diagnostic, not a log.
            """,
        shouldDisplay: true)

    @Option(help: "Adapter name (hci0) or address (AA:BB:CC:DD:EE:FF).")
    var adapter = "hci0"

    @Option(help: "Stop after this many seconds (0: until SIGINT/SIGTERM).")
    var seconds: Double = 10

    @Flag(help: "Active scanning (send scan requests, get scan responses).")
    var active = false

    @Option(name: .customLong("interval-ms"), help: "Scan interval in ms (2.5…10240).")
    var intervalMs: Double = 100

    @Option(name: .customLong("window-ms"), help: "Scan window in ms (2.5…10240, at most the interval).")
    var windowMs: Double = 100

    @Flag(help: "Use the legacy scan commands even when the controller supports extended scanning.")
    var legacy = false

    func run() throws {
        let scanner: HCIScanner
        do {
            scanner = HCIScanner(
                adapter: try AdapterSelector(parsing: adapter),
                parameters: ScanParameters(
                    active: active, intervalMs: intervalMs, windowMs: windowMs, filterDuplicates: false,
                    preferExtended: !legacy))
        } catch {
            scanError("waymark-edge scan: \(error.message)")
            throw ExitCode(2)
        }
        let counts = Mutex((events: 0, reports: 0, failed: 0))
        let done = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { done.signal() }
            source.resume()
            return source
        }
        do {
            try scanner.start(
                onEvent: { event in
                    let line = ScanOutput.line(event: event, time: Date().timeIntervalSince1970)
                    print(line.text)
                    counts.withLock { $0.events += 1; $0.reports += line.reports; $0.failed += line.failed ? 1 : 0 }
                },
                onStateChange: { state in scanError("waymark-edge scan: \(state)") })
        } catch {
            scanError("waymark-edge scan: \(error)")
            throw ExitCode(error.code == .invalidConfiguration ? 2 : 1)
        }
        _ = seconds > 0 ? done.wait(timeout: .now() + seconds) : { done.wait(); return .success }()
        scanner.stop()
        sources.forEach { $0.cancel() }
        fflush(nil)
        let c = counts.withLock { $0 }
        scanError("waymark-edge scan: \(c.events) events, \(c.reports) reports, \(c.failed) undecodable")
        if case .stopped(let error?) = scanner.state {
            scanError("waymark-edge scan: \(error)")
            throw ExitCode(1)
        }
    }
}

/// Writes a line to standard error.
private func scanError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Renders one HCI event from the scanner as a JSON line.
enum ScanOutput {
    static func line(event: [UInt8], time: Double) -> (text: String, reports: Int, failed: Bool) {
        let t = ("time", JSONValue.double((time * 1000).rounded() / 1000))
        do {
            let reports = try HCIEventDecoder.decode(event)
            let lines = reports.map { report -> String in
                guard case .object(let members) = report.json else { return "" }
                return JSONValue.object([t, ("format", .string(report.format.rawValue))] + members).rendered
            }
            return (lines.joined(separator: "\n"), reports.count, false)
        } catch {
            let json = JSONValue.object([t, ("error", DecodeOutput.error(code: error.code, message: error.message)), ("hex", .hex(event))])
            return (json.rendered, 0, true)
        }
    }
}
