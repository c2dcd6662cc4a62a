import Foundation
import SwiftProtobuf
import WaymarkAggregator
import WaymarkCore
import WaymarkEdge
import WaymarkProtobuf

/// `waymark-bench batch-decode`: sighting batches decoded (aggregator) and encoded (edge) per
/// second on one thread, per encoding: the batches of `aggregator-core` (200 sightings each),
/// 1000 of them per pass. Like `decode`, each figure is the best of five ~0.5 s rounds, per second
/// of this thread's CPU time and of wall-clock time.
enum BatchDecodeBenchmark {
    static func run() {
        let batches = Array(AggregatorBenchmark.makeSightingBatches(total: 200_000).prefix(1000))
        let sightings = batches.reduce(0) { $0 + $1.sightings.count }
        let json = batches.map(BatchCoding.encode)
        let protobuf = batches.map(ProtobufBatchCoding.encode)
        func size(_ p: [[UInt8]]) -> String {
            String(format: "%.0f bytes per sighting", Double(p.reduce(0) { $0 + $1.count }) / Double(sightings))
        }
        print("batch-decode: \(batches.count) batches, \(sightings) sightings per pass; json \(size(json)), protobuf \(size(protobuf))")

        for (label, payloads) in [("json", json), ("protobuf", protobuf)] {
            report("\(label): BatchDecoder.decode (parse, checks, SightingBatch)", sightings) { sink in
                var decoder = BatchDecoder()
                for p in payloads { sink &+= try! decoder.decode(p).sightings.count }
            }
        }
        report("protobuf: SwiftProtobuf parse alone (generated message, no checks)", sightings) { sink in
            var options = BinaryDecodingOptions()
            options.discardUnknownFields = true
            for p in protobuf { sink &+= try! Waymark_V1_SightingBatch(serializedBytes: p, options: options).sightings.count }
        }
        report("json: Foundation JSONDecoder (Codable), for comparison", sightings) { sink in
            let decoder = JSONDecoder()
            for p in json { sink &+= try! decoder.decode(SightingBatch.self, from: Data(p)).sightings.count }
        }
        report("json: edge encode (BatchCoding)", sightings) { sink in
            for b in batches { sink &+= BatchCoding.encode(b).count }
        }
        report("protobuf: edge encode (ProtobufBatchCoding)", sightings) { sink in
            for b in batches { sink &+= ProtobufBatchCoding.encode(b).count }
        }
    }

    /// The best rate of five ~0.5 s rounds of `pass`, in sightings per second.
    static func report(_ label: String, _ perPass: Int, _ pass: (inout Int) -> Void) {
        var sink = 0
        pass(&sink)  // warm up
        var bestWall = 0.0, bestCPU = 0.0
        for _ in 0..<5 {
            var passes = 0
            let wall0 = DecodeBenchmark.now(CLOCK_MONOTONIC)
            let cpu0 = DecodeBenchmark.now(CLOCK_THREAD_CPUTIME_ID)
            var wall = 0.0
            while wall < 0.5 {
                pass(&sink)
                passes += 1
                wall = DecodeBenchmark.now(CLOCK_MONOTONIC) - wall0
            }
            let cpu = DecodeBenchmark.now(CLOCK_THREAD_CPUTIME_ID) - cpu0
            bestWall = max(bestWall, Double(passes * perPass) / wall)
            bestCPU = max(bestCPU, Double(passes * perPass) / cpu)
        }
        print(String(format: "  %@: %.2f M sightings/s of CPU time, %.2f M/s wall  (sink %d)", label, bestCPU / 1e6, bestWall / 1e6, sink % 10))
    }
}
