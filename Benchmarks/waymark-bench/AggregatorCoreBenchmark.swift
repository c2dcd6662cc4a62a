import Foundation
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore

/// `waymark-bench aggregator-core [SIGHTINGS] [--decode-threads N,N…]`: the aggregator's fusion
/// thread alone, in process — the batches of `waymark-bench aggregator` handed to `AggregatorCore`
/// (decode, validate, fuse, route), its publications taken and its writes sealed at the rates the
/// service uses — with no broker and no database. Prints sightings per second and where the time
/// goes, so the thread that bounds the end-to-end rate can be measured on its own.
///
/// With `--decode-threads` (default: 0 and the service's default), the batches go through the
/// service's `DecodeStage` as well: a producer thread stands in for the MQTT thread, that many
/// threads decode ahead, and the fusion thread takes them in order.
enum AggregatorCoreBenchmark {
    static func run() {
        var total = 2_000_000
        var threads = Array(Set([0, AggregatorConfig.defaultDecodeThreads])).sorted()
        var args = Array(CommandLine.arguments.dropFirst(2))
        while !args.isEmpty {
            let a = args.removeFirst()
            if a == "--decode-threads", let list = args.first {
                args.removeFirst()
                threads = list.split(separator: ",").compactMap { Int($0) }.filter { $0 >= 0 }
            } else if let n = Int(a) {
                total = n
            } else {
                print("aggregator-core: unknown argument \(a); usage: aggregator-core [SIGHTINGS] [--decode-threads N,N…]")
                return
            }
        }
        do { try measure(total: total, decodeThreads: threads) } catch { print("aggregator-core: failed: \(error)") }
    }

    static func measure(total: Int, decodeThreads: [Int]) throws {
        let siteID = "bench-core"
        let sitePath = FileManager.default.temporaryDirectory.appendingPathComponent("\(siteID)-\(getpid()).yaml").path
        try AggregatorBenchmark.siteYAML(siteID).write(toFile: sitePath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: sitePath) }
        let site = try SiteLoader.load(path: sitePath).site
        let (payloads, sightings) = try AggregatorBenchmark.makeBatches(total: total)
        print("aggregator-core: \(payloads.count) batches, \(sightings) sightings, \(AggregatorBenchmark.gateways) gateways, \(AggregatorBenchmark.devices) devices, \(ProcessInfo.processInfo.activeProcessorCount) cores")

        var settings = AggregatorCore.Settings()
        settings.clock.toleranceS = 1e9
        settings.clock.maxAgeS = 1e10
        let topics = Topics(site: site.id)
        let topicNames = payloads.map { topics.sightings($0.gateway) }
        // The end-to-end benchmark runs at ~200–250 k sightings/s, so the service publishes and
        // seals about every 50 windows of 20 batches; do the same here.
        let batchesPerInterval = 50 * AggregatorBenchmark.gateways
        for round in 1...3 {
            var core = AggregatorCore(site: site, topics: topics, settings: settings)
            var handle = Duration.zero, publish = Duration.zero, seal = Duration.zero
            var publications = 0, rows = 0
            let clock = ContinuousClock()
            let now = Date().timeIntervalSince1970
            for (i, p) in payloads.enumerated() {
                let started = clock.now
                _ = core.handle(topic: topicNames[i], payload: p.payload, receivedAt: now)
                handle += clock.now - started
                if (i + 1) % batchesPerInterval == 0 || i == payloads.count - 1 {
                    let t0 = clock.now
                    publications += core.takePublications().count
                    let t1 = clock.now
                    rows += core.sealWrite()?.rowCount ?? 0
                    publish += t1 - t0
                    seal += clock.now - t1
                }
            }
            let all = handle + publish + seal
            print(String(format: "aggregator-core: round %d: %.0f sightings/s (%.2f s): handle %.2f s, publications %.2f s (%d), seal %.2f s (%d rows)",
                         round, Double(sightings) / all.seconds, all.seconds, handle.seconds, publish.seconds, publications, seal.seconds, rows))
        }
        for workers in decodeThreads {
            for round in 1...3 {
                var core = AggregatorCore(site: site, topics: topics, settings: settings)
                let stage = DecodeStage(capacity: 20_000, workers: workers, preparer: BatchPreparer(for: core))
                stage.start()
                let now = Date().timeIntervalSince1970
                let clock = ContinuousClock()
                let started = clock.now
                let producer = Thread {
                    for (i, p) in payloads.enumerated() {
                        stage.push(.init(topic: topicNames[i], payload: p.payload, retained: false, receivedAt: now))
                    }
                }
                producer.start()
                var waited = Duration.zero
                for i in 0..<payloads.count {
                    let t0 = clock.now
                    guard let (m, prepared) = stage.pop(timeout: 60) else { print("aggregator-core: the stage stalled"); return }
                    waited += clock.now - t0
                    _ = core.handle(topic: m.topic, payload: m.payload, receivedAt: m.receivedAt, prepared: prepared)
                    if (i + 1) % batchesPerInterval == 0 || i == payloads.count - 1 {
                        _ = core.takePublications()
                        _ = core.sealWrite()
                    }
                }
                let all = clock.now - started
                let ahead = stage.decodedAhead
                stage.close()
                stage.join()
                print(String(format: "aggregator-core: decode threads %d, round %d: %.0f sightings/s (%.2f s); fusion thread waited %.2f s for messages; %d of %d batches decoded ahead",
                             workers, round, Double(sightings) / all.seconds, all.seconds, waited.seconds, ahead, payloads.count))
            }
        }
    }
}
