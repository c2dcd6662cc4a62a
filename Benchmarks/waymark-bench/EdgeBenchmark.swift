import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkEdge

/// `waymark-bench edge [REPETITIONS]`: the edge agent's cost per advert — parse (hcidump text →
/// bytes), decode, filter, window, spool, publish — replaying the shared HCI capture as fast as
/// possible into a real `EdgeAgent` connected to Mosquitto. Target: ≤ 2 µs per advert.
///
/// Uses WAYMARK_MQTT_URL when set, else starts a private `mosquitto` on a free port. The capture
/// (511 events, 3 tracked devices among 26) is replayed REPETITIONS times (default 400) with
/// synthetic times 10 ms apart, so about one batch is spooled and published per 100 adverts —
/// the real ratio for a busy gateway at 1-s windows. Also prints the stages on their own.
enum EdgeBenchmark {
    static func run() {
        let repetitions = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 400 : 400
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let capture = root.deletingLastPathComponent().appendingPathComponent("shared/data/ruuvitag-sensor-hcidump/hcidump-2.x.txt").path
        guard FileManager.default.fileExists(atPath: capture) else {
            print("edge: capture not found at \(capture) (the shared/ folder must sit beside the repository)")
            return
        }
        var broker: BenchBroker?
        let url: String
        if let env = ProcessInfo.processInfo.environment["WAYMARK_MQTT_URL"] {
            url = env
        } else {
            guard let b = BenchBroker.start() else {
                print("edge: set WAYMARK_MQTT_URL or install mosquitto (scripts/setup.sh)")
                return
            }
            broker = b
            url = b.url
        }
        defer { broker?.stop() }
        do {
            try stages(capture: capture, repetitions: 50)
            for fsync in [false, true] {
                try endToEnd(capture: capture, repetitions: repetitions, broker: url, fsync: fsync)
            }
        } catch {
            print("edge: failed: \(error)")
        }
    }

    static func site() throws -> Site {
        try SiteLoader.parse(yaml: """
        site: bench-edge
        gateways: [{id: gw-bench, position: [0, 0]}]
        regions: [{id: r1, gateways: [gw-bench]}]
        tracking:
          macs: ["14:BB:6E:A6:5E:51", "D0:03:DF:91:50:EB", "C5:0D:FA:99:CB:9E"]
        """).site
    }

    /// The pure stages alone: text parsing, then decode + filter + window.
    static func stages(capture: String, repetitions: Int) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capture)))
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        var events: [[UInt8]] = []
        var start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<repetitions {
            var parser = ReplayParser()
            events.removeAll(keepingCapacity: true)
            for line in lines { parser.feed(bytes: line) { if case .hciEvent(let b, _, _) = $0 { events.append(b) } } }
            for item in parser.finish() { if case .hciEvent(let b, _, _) = item { events.append(b) } }
        }
        let parseNS = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(repetitions * events.count)
        var pipeline = EdgePipeline(gateway: "gw-bench", boot: "bench", window: 1, rules: try site().tracking)
        var batches = 0
        start = DispatchTime.now().uptimeNanoseconds
        var t = 1_000_000.0
        for _ in 0..<repetitions {
            for e in events {
                if pipeline.ingest(event: e, time: t) != nil { batches += 1 }
                t += 0.01
            }
        }
        let pipeNS = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(repetitions * events.count)
        print(String(format: "edge: stages: hcidump text → bytes %.3f µs/event; decode+filter+window %.3f µs/advert (%d batches)",
                     parseNS / 1000, pipeNS / 1000, batches))
    }

    /// The whole agent: replay → pipeline → spool → MQTT publish, timed from the first event to
    /// the last one handed on, then to the last PUBACK.
    static func endToEnd(capture: String, repetitions: Int, broker: String, fsync: Bool) throws {
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-bench-edge-\(getpid())-\(fsync)").path
        defer { try? FileManager.default.removeItem(atPath: spool) }
        var config = EdgeConfig(sitePath: "bench", gateway: "gw-bench")
        config.mqtt.url = broker
        config.mqtt.clientID = "bench-edge-\(getpid())"
        config.topicPrefix = "waymark-bench/edge-\(getpid())"
        config.spoolDir = spool
        config.spoolFsync = fsync
        config.spoolMaxBytes = 1 << 30
        config.metricsPort = 0
        config.mqtt.maxInflight = 100
        let source = GatedSource(ReplaySource(path: capture, rate: 0, eventInterval: 0.01, startTime: 1_000_000, repetitions: repetitions))
        let agent = try EdgeAgent(config: config, site: try site(), source: source)
        source.gate = { agent.snapshot().connected }
        let task = Task { try await agent.run() }
        while !agent.snapshot().sourceFinished { Thread.sleep(forTimeInterval: 0.005) }
        let delivered = source.elapsed
        let s0 = agent.snapshot()
        // Until the broker has acknowledged every batch published.
        while agent.snapshot().runtime.published < agent.snapshot().pipeline.batches {
            Thread.sleep(forTimeInterval: 0.001)
        }
        let acked = Double(DispatchTime.now().uptimeNanoseconds - source.startedAt) / 1e9
        agent.requestStop()
        let semaphore = DispatchSemaphore(value: 0)
        Task { _ = try? await task.value; semaphore.signal() }
        semaphore.wait()
        let adverts = s0.pipeline.adverts
        print(String(format: "edge: end to end (fsync %@): %d adverts, %d tracked, %d batches spooled+published in %.3f s: %.3f µs/advert (%.3f µs/advert until the last PUBACK)",
                     fsync ? "on" : "off", adverts, s0.pipeline.tracked, s0.pipeline.batches, delivered,
                     delivered * 1e6 / Double(adverts), acked * 1e6 / Double(adverts)))
    }
}

/// Holds a replay until the agent is connected, and times it.
final class GatedSource: SightingSource, @unchecked Sendable {
    let inner: ReplaySource
    var gate: @Sendable () -> Bool = { true }
    private(set) var startedAt: UInt64 = 0
    private(set) var elapsed = 0.0

    init(_ inner: ReplaySource) { self.inner = inner }
    var name: String { inner.name }
    var usesWallClock: Bool { false }
    func stop() { inner.stop() }

    func run(into sink: any SightingSink) throws {
        while !gate() { Thread.sleep(forTimeInterval: 0.005) }
        startedAt = DispatchTime.now().uptimeNanoseconds
        try inner.run(into: sink)
        elapsed = Double(DispatchTime.now().uptimeNanoseconds - startedAt) / 1e9
    }
}

/// A private mosquitto on a free port for the benchmark.
struct BenchBroker {
    var process: Process
    var url: String

    static func start() -> BenchBroker? {
        guard let path = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return nil
        }
        let port = Int.random(in: 20_000...60_000)
        let conf = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-bench-mosquitto-\(getpid()).conf").path
        try? "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 100000\n"
            .write(toFile: conf, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = ["-c", conf]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        Thread.sleep(forTimeInterval: 0.3)
        return BenchBroker(process: p, url: "mqtt://127.0.0.1:\(port)")
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
