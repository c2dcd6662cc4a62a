import Foundation
import Testing
import WaymarkCore
@testable import WaymarkAggregator

/// `DecodeStage`: batches decoded on other threads reach the fusion thread in arrival order, and
/// the core decides exactly what it decides when it decodes them itself.
@Suite struct DecodeStageTests {
    let topics = Topics(site: "line")

    func core() throws -> AggregatorCore {
        var settings = AggregatorCore.Settings(clock: .recorded)
        settings.maxPayloadBytes = 64 << 10
        return AggregatorCore(site: try LineVenue.site(count: 4), topics: topics, settings: settings)
    }

    /// Walks of 12 devices, interleaved with every kind of message the core refuses or ignores,
    /// and duplicates.
    func messages() throws -> [DecodeStage.Message] {
        let records = LineWalk.records(devices: 12, path: [0, 1, 2, 3, 2], dwell: 20, start: 1_700_000_000, regions: 4)
        var out: [DecodeStage.Message] = []
        for (i, batch) in LineWalk.batches(records).enumerated() {
            let payload = Array(try JSONEncoder().encode(batch))
            out.append(.init(topic: topics.sightings(batch.gateway), payload: payload, retained: false, receivedAt: batch.end + 1))
            switch i % 50 {
            case 7: out.append(.init(topic: topics.sightings(batch.gateway), payload: payload, retained: false, receivedAt: batch.end + 2))
            case 13: out.append(.init(topic: topics.sightings(batch.gateway), payload: Array("{\"v\":1,".utf8), retained: false, receivedAt: batch.end + 1))
            case 21: out.append(.init(topic: topics.sightings("gw-99"), payload: payload, retained: false, receivedAt: batch.end + 1))
            case 29: out.append(.init(topic: topics.sightings(batch.gateway), payload: Array(repeating: 0x20, count: 70_000), retained: false, receivedAt: batch.end + 1))
            case 37: out.append(.init(topic: "elsewhere/x", payload: payload, retained: false, receivedAt: batch.end + 1))
            default: break
            }
        }
        return out
    }

    struct Run: Equatable {
        var outcomes: [AggregatorCore.Outcome] = []
        var topics: [String] = []
        var publications: [[UInt8]] = []
        var events = 0, visits = 0, transitions = 0, rows = 0
    }

    /// Feeds `messages` through a stage with `workers` threads; `holdFirst`: let the workers
    /// decode everything before the fusion side starts taking messages.
    func run(_ messages: [DecodeStage.Message], workers: Int?, holdFirst: Bool = false) throws -> (Run, decodedAhead: Int) {
        var c = try core()
        var result = Run()
        var ahead = 0
        func take(_ m: DecodeStage.Message, _ prepared: PreparedBatch?) {
            result.topics.append(m.topic)
            result.outcomes.append(c.handle(topic: m.topic, payload: m.payload, receivedAt: m.receivedAt, prepared: prepared))
            result.publications += c.takePublications().map(\.payload)
        }
        if let workers {
            let stage = DecodeStage(capacity: messages.count + 1, workers: workers, preparer: BatchPreparer(for: c))
            stage.start()
            let producer = Thread { for m in messages { stage.push(m) } }
            producer.start()
            if holdFirst {
                let decodable = messages.filter { $0.topic != "elsewhere/x" && !$0.topic.hasSuffix("gw-99/sightings") && $0.payload.count <= 64 << 10 }.count
                let deadline = Date().addingTimeInterval(30)
                while stage.decodedAhead < decodable && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            }
            for _ in messages {
                let next = stage.pop(timeout: 30)
                let (m, prepared) = try #require(next)
                take(m, prepared)
            }
            ahead = stage.decodedAhead
            stage.close()
            stage.join()
            #expect(stage.pop(timeout: 0) == nil)
        } else {
            for m in messages { take(m, nil) }
        }
        let sealed = c.sealWrite()
        let write = try #require(sealed)
        result.events = write.events.count
        result.visits = write.visits.count
        result.transitions = write.transitions.count
        result.rows = write.rowCount
        return (result, ahead)
    }

    @Test func decodedAheadOrNotTheCoreDecidesTheSame() throws {
        let messages = try messages()
        let (reference, _) = try run(messages, workers: nil)
        #expect(reference.visits > 0 && reference.events > 0)
        #expect(reference.outcomes.contains { if case .rejected(.malformed, _) = $0 { true } else { false } })
        #expect(reference.outcomes.contains { if case .rejected(.oversize, _) = $0 { true } else { false } })
        #expect(reference.outcomes.contains { if case .rejected(.unknownGateway, _) = $0 { true } else { false } })
        #expect(reference.outcomes.contains { if case .duplicate = $0 { true } else { false } })
        #expect(reference.outcomes.contains(.ignored))
        #expect(reference.topics == messages.map(\.topic))
        for workers in [0, 1, 3] {
            let (r, ahead) = try run(messages, workers: workers)
            #expect(r == reference, "workers \(workers)")
            if workers == 0 { #expect(ahead == 0) }
        }
        // Every batch decoded by the workers before the fusion side looked: still the same.
        let (held, ahead) = try run(messages, workers: 2, holdFirst: true)
        #expect(held == reference)
        #expect(ahead > messages.count / 2, "the workers decoded \(ahead) of \(messages.count) messages")
    }

    @Test func closingDrainsWhatIsQueuedAndRefusesMore() throws {
        let c = try core()
        let stage = DecodeStage(capacity: 10, workers: 2, preparer: BatchPreparer(for: c))
        stage.start()
        let batch = SightingBatch(gateway: "gw-1", boot: "b", seq: 1, start: 1_700_000_000, end: 1_700_000_001, sightings: [])
        let m = DecodeStage.Message(topic: topics.sightings("gw-1"), payload: Array(try JSONEncoder().encode(batch)), retained: false, receivedAt: 1_700_000_002)
        #expect(stage.push(m))
        #expect(stage.push(m))
        stage.close()
        #expect(!stage.push(m))
        #expect(stage.pop(timeout: 1) != nil)
        #expect(stage.pop(timeout: 1) != nil)
        #expect(stage.pop(timeout: 1) == nil)
        stage.join()
    }
}
