import Foundation
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkEdge
import WaymarkFusion
import WaymarkProtobuf

/// `waymark-bench aggregator-core [SIGHTINGS] [json|protobuf]…`: the aggregator's fusion thread
/// alone, in process — the batches of `waymark-bench aggregator` handed to `AggregatorCore`
/// (decode, validate, fuse, route), its publications taken and its writes sealed at the rates the
/// service uses — with no broker and no database, once per batch encoding (both by default).
///
/// Prints sightings per second of the whole thread and where its time goes (issue 18), measured
/// as three passes over the same payloads in each round, on this thread's CPU clock (the machine
/// is shared; wall-clock time would count the other processes):
/// - **decode**: `BatchDecoder.decode` of every payload alone (a fresh decoder, so its device-id
///   cache fills as in the core);
/// - **engine**: the decoded batches fed to a fresh `FusionEngine` through `EngineFeed`, as
///   `AggregatorCore.apply` feeds it (outputs produced and dropped);
/// - **thread**: `AggregatorCore.handle` for every payload plus `takePublications` and `sealWrite`
///   at the service's rate. Its `handle` part less decode and engine is the rest of `handle`:
///   validation, clock check, reorder stage, routing the outputs, device activity, write rows.
/// The split is by subtraction of separately timed passes, so it is approximate (a few % either
/// way: caches are warm differently), but it needs no timer inside `AggregatorCore`.
///
/// Then, per `--workers N,N…` (`fusion.workers`; default: 1 and the service's default), the
/// decoded batches through `FusionWorkers` alone (the engines' share, wall clock), and the
/// thread pass again on the wall clock (the workers' threads are not this thread's CPU time), per
/// encoding; and per worker count and `--decode-threads N,N…` (default: 0 and the service's
/// default), the JSON batches through the service's `DecodeStage`: a producer thread stands in for
/// the MQTT thread, N threads decode ahead, and this thread takes them in order, handles, publishes
/// and seals (wall clock).
enum AggregatorCoreBenchmark {
    static func run() {
        var total = 2_000_000
        var encodings: [BatchEncoding] = []
        var threads = Array(Set([0, AggregatorConfig.defaultDecodeThreads])).sorted()
        var workers = Array(Set([1, AggregatorConfig.defaultFusionWorkers])).sorted()
        var args = CommandLine.arguments.dropFirst(2).makeIterator()
        while let arg = args.next() {
            if let n = Int(arg) { total = n }
            else if arg == "--encoding", let e = args.next().flatMap(BatchEncoding.init(rawValue:)) { encodings.append(e) }
            else if arg == "--decode-threads", let list = args.next() {
                threads = list.split(separator: ",").compactMap { Int($0) }.filter { $0 >= 0 }
            }
            else if arg == "--workers", let list = args.next() {
                workers = list.split(separator: ",").compactMap { Int($0) }.filter { $0 >= 1 }
            }
            else if let e = BatchEncoding(rawValue: arg) { encodings.append(e) }
            else {
                print("usage: waymark-bench aggregator-core [SIGHTINGS] [json|protobuf]… [--workers N,N…] [--decode-threads N,N…] (default: 2000000 sightings, both encodings, fusion workers 1 and the service's default, decode threads 0 and the service's default)")
                return
            }
        }
        if encodings.isEmpty { encodings = BatchEncoding.allCases }
        do { try measure(total: total, encodings: encodings, workers: workers, decodeThreads: threads) } catch { print("aggregator-core: failed: \(error)") }
    }

    static func measure(total: Int, encodings: [BatchEncoding], workers: [Int], decodeThreads: [Int]) throws {
        let siteID = "bench-core"
        let sitePath = FileManager.default.temporaryDirectory.appendingPathComponent("\(siteID)-\(getpid()).yaml").path
        try AggregatorBenchmark.siteYAML(siteID).write(toFile: sitePath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: sitePath) }
        let site = try SiteLoader.load(path: sitePath).site
        let batches = AggregatorBenchmark.makeSightingBatches(total: total)
        let sightings = batches.reduce(0) { $0 + $1.sightings.count }
        print("aggregator-core: \(batches.count) batches, \(sightings) sightings, \(AggregatorBenchmark.gateways) gateways, \(AggregatorBenchmark.devices) devices; times are this thread's CPU time")
        let gatewayIndex = batches.map { site.gatewayIndex($0.gateway)! }
        for encoding in encodings {
            let payloads = batches.map { b -> [UInt8] in
                encoding == .json ? WaymarkEdge.BatchCoding.encode(b) : ProtobufBatchCoding.encode(b)
            }
            let bytes = payloads.reduce(0) { $0 + $1.count }
            print(String(format: "aggregator-core: %@: %.1f MB of payloads, %.0f bytes per sighting",
                         encoding.rawValue, Double(bytes) / 1e6, Double(bytes) / Double(sightings)))
            for round in 1...3 {
                let decode = decodePass(payloads)
                let engine = enginePass(batches, gateways: gatewayIndex, site: site)
                let thread = threadPass(payloads, batches: batches, site: site)
                let rest = thread.handle - decode - engine
                let all = thread.handle + thread.publish + thread.seal
                func part(_ s: Double) -> String { String(format: "%.2f s (%2.0f %%)", s, 100 * s / all) }
                print(String(format: "aggregator-core: %@ round %d: %.0f sightings/s (%.2f s): decode %@, engine %@, rest of handle %@, publications %@ (%d), seal %@ (%d rows); decode alone %.2f M sightings/s, %.0f MB/s",
                             encoding.rawValue, round, Double(sightings) / all, all, part(decode), part(engine), part(rest),
                             part(thread.publish), thread.publications, part(thread.seal), thread.rows,
                             Double(sightings) / decode / 1e6, Double(bytes) / decode / 1e6))
            }
            for count in workers where encoding == encodings[0] {
                for round in 1...3 {
                    let wall = workersPass(batches, gateways: gatewayIndex, site: site, count: count)
                    print(String(format: "aggregator-core: engine alone (decoded batches) with %d fusion worker%@, round %d: %.0f sightings/s (%.2f s wall)",
                                 count, count == 1 ? "" : "s", round, Double(sightings) / wall, wall))
                }
            }
            for count in workers {
                for round in 1...3 {
                    let clock = ContinuousClock()
                    let started = clock.now
                    let thread = threadPass(payloads, batches: batches, site: site, fusionWorkers: count)
                    let wall = (clock.now - started).seconds
                    print(String(format: "aggregator-core: %@ with %d fusion worker%@, round %d: %.0f sightings/s (%.2f s wall; this thread's CPU %.2f s)",
                                 encoding.rawValue, count, count == 1 ? "" : "s", round, Double(sightings) / wall, wall,
                                 thread.handle + thread.publish + thread.seal))
                }
            }
        }
        let json = batches.map { WaymarkEdge.BatchCoding.encode($0) }
        for count in workers {
            for decoders in decodeThreads {
                for round in 1...3 {
                    stagePass(json, batches: batches, site: site, workers: decoders, fusionWorkers: count, round: round, sightings: sightings)
                }
            }
        }
    }

    /// The payloads through a `DecodeStage` with `workers` decode threads, as in the service.
    static func stagePass(_ payloads: [[UInt8]], batches: [SightingBatch], site: Site, workers: Int, fusionWorkers: Int,
                          round: Int, sightings: Int) {
        let (initial, topicNames) = benchCore(site: site, batches: batches, fusionWorkers: fusionWorkers)
        var core = initial
        let batchesPerInterval = 50 * AggregatorBenchmark.gateways
        let stage = DecodeStage(capacity: 20_000, workers: workers, preparer: BatchPreparer(for: core))
        stage.start()
        let now = Date().timeIntervalSince1970
        let clock = ContinuousClock()
        let started = clock.now
        let producer = Thread {
            for (i, p) in payloads.enumerated() {
                stage.push(.init(topic: topicNames[i], payload: p, retained: false, receivedAt: now))
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
        print(String(format: "aggregator-core: json through DecodeStage, decode threads %d, fusion workers %d, round %d: %.0f sightings/s (%.2f s wall); fusion thread waited %.2f s for messages; %d of %d batches decoded ahead",
                     workers, fusionWorkers, round, Double(sightings) / all.seconds, all.seconds, waited.seconds, ahead, payloads.count))
    }

    /// Every payload through a fresh `BatchDecoder`; seconds of CPU.
    static func decodePass(_ payloads: [[UInt8]]) -> Double {
        var decoder = BatchDecoder()
        var sink = 0
        let t0 = cpuNow()
        for p in payloads {
            do { sink &+= try decoder.decode(p).sightings.count } catch { fatalError("benchmark payload rejected: \(error)") }
        }
        let t = cpuNow() - t0
        precondition(sink > 0)
        return t
    }

    /// The decoded batches through `EngineFeed` into a fresh engine; seconds of CPU.
    static func enginePass(_ batches: [SightingBatch], gateways: [Int], site: Site) -> Double {
        var engine = FusionEngine(site: site)
        var feed = EngineFeed()
        var outputs: [FusionOutput] = []
        var handles: [DeviceHandle] = []
        var produced = 0
        let t0 = cpuNow()
        for (i, b) in batches.enumerated() {
            feed.feed(b, gateway: gateways[i], &engine, into: &outputs, handles: &handles)
            produced &+= outputs.count
            outputs.removeAll(keepingCapacity: true)
        }
        let t = cpuNow() - t0
        withExtendedLifetime(produced) {}
        return t
    }

    /// The decoded batches through fresh `FusionWorkers` of `count` engines; seconds of wall clock.
    static func workersPass(_ batches: [SightingBatch], gateways: [Int], site: Site, count: Int) -> Double {
        var fusion = FusionWorkers(site: site, count: count)
        var outputs: [FusionOutput] = []
        var handles: [DeviceHandle] = []
        var produced = 0
        let clock = ContinuousClock()
        let started = clock.now
        for (i, b) in batches.enumerated() {
            fusion.feed(b, gateway: gateways[i], into: &outputs, handles: &handles)
            produced &+= outputs.count
            outputs.removeAll(keepingCapacity: true)
        }
        let t = (clock.now - started).seconds
        withExtendedLifetime(produced) {}
        return t
    }

    struct ThreadTimes {
        var handle = 0.0, publish = 0.0, seal = 0.0
        var publications = 0, rows = 0
    }

    /// The fusion thread's work: `handle` per payload, publications and sealed writes about every
    /// 50 windows of 20 batches (the end-to-end benchmark runs at ~200–300 k sightings/s, so the
    /// service publishes and seals about that often).
    static func threadPass(_ payloads: [[UInt8]], batches: [SightingBatch], site: Site, fusionWorkers: Int = 1) -> ThreadTimes {
        let (initial, topicNames) = benchCore(site: site, batches: batches, fusionWorkers: fusionWorkers)
        var core = initial
        let batchesPerInterval = 50 * AggregatorBenchmark.gateways
        var times = ThreadTimes()
        let now = Date().timeIntervalSince1970
        for (i, p) in payloads.enumerated() {
            let started = cpuNow()
            let outcome = core.handle(topic: topicNames[i], payload: p, receivedAt: now)
            times.handle += cpuNow() - started
            guard case .accepted = outcome else { fatalError("benchmark batch not accepted: \(outcome)") }
            if (i + 1) % batchesPerInterval == 0 || i == payloads.count - 1 {
                let t0 = cpuNow()
                times.publications += core.takePublications().count
                let t1 = cpuNow()
                times.rows += core.sealWrite()?.rowCount ?? 0
                times.publish += t1 - t0
                times.seal += cpuNow() - t1
            }
        }
        return times
    }

    /// A core for the benchmark's synthetic windows (sent faster than real time, so the clock
    /// checks are opened up), and each batch's topic.
    static func benchCore(site: Site, batches: [SightingBatch], fusionWorkers: Int = 1) -> (AggregatorCore, [String]) {
        var settings = AggregatorCore.Settings(clock: .recorded)
        settings.fusionWorkers = fusionWorkers
        let topics = Topics(site: site.id)
        return (AggregatorCore(site: site, topics: topics, settings: settings), batches.map { topics.sightings($0.gateway) })
    }

    static func cpuNow() -> Double { DecodeBenchmark.now(CLOCK_THREAD_CPUTIME_ID) }
}
