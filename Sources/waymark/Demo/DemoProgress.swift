import Foundation

/// The demo's progress on standard error: one line rewritten in place on a terminal, a plain
/// line every few seconds otherwise (CI logs).
struct DemoProgress {
    let isTerminal = isatty(2) == 1
    private var lastPlain = 0.0
    private var shown = false

    struct Figures {
        var simulatedTime: Double
        var fraction: Double
        var published: Int
        var acked: Int
        var expected: Int
        var visits: Int?
        var gatewaysRunning: Int
    }

    mutating func show(_ f: Figures) {
        let clock = Self.clock(f.simulatedTime)
        let visits = f.visits.map { "\($0)" } ?? "?"
        let text = "simulated \(clock) (\(Int(f.fraction * 100)) %) · batches published \(f.published)/\(f.expected), "
            + "acked \(f.acked) · visits in the database \(visits) · \(f.gatewaysRunning) edges running"
        if isTerminal {
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
            shown = true
        } else {
            let now = Date().timeIntervalSince1970
            guard now - lastPlain >= 5 else { return }
            lastPlain = now
            printError(text)
        }
    }

    /// Ends the updating line so that what follows starts on a fresh one.
    mutating func finish() {
        if isTerminal && shown { FileHandle.standardError.write(Data("\n".utf8)) }
        shown = false
    }

    /// HH:MM:SS UTC.
    static func clock(_ t: Double) -> String {
        let s = Int(t.rounded(.down)) % 86_400
        return String(format: "%02d:%02d:%02d UTC", s / 3600, s / 60 % 60, s % 60)
    }
}

/// Set by SIGINT, SIGTERM or SIGHUP; the demo's loops check it.
final class DemoStopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var raised: Int32 = 0
    private var sources: [any DispatchSourceSignal] = []

    /// Installs the handlers (the default actions are turned off while the demo runs).
    init() {
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.raise(number) }
            source.resume()
            sources.append(source)
        }
    }

    private func raise(_ number: Int32) { lock.withLock { raised = number } }

    /// The signal received, if any.
    var received: Int32? { lock.withLock { raised == 0 ? nil : raised } }

    deinit { sources.forEach { $0.cancel() } }
}
