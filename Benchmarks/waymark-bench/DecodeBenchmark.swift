import Foundation
import WaymarkAdvertising
import WaymarkCore

/// Decoding throughput on one thread: legacy and extended advertising report events per second,
/// over the real ruuvitag captures in ../shared/data (814 events) plus iBeacon, Eddystone and
/// AltBeacon adverts. Each figure is the best of five ~0.5 s rounds.
enum DecodeBenchmark {
    static func run() {
        let legacy = corpus()
        let extended = legacy.map(toExtended)
        let reportsPerPass = legacy.count
        print("decode: corpus of \(reportsPerPass) events (1 report each), single thread")

        report("legacy: HCI framing + AD validation", reportsPerPass) { sink in
            for e in legacy { sink &+= try! HCIEventDecoder.decode(e).count }
        }
        report("legacy: + beacon recognition", reportsPerPass) { sink in
            for e in legacy {
                for r in try! HCIEventDecoder.decode(e) where r.beacon != nil { sink &+= 1 }
            }
        }
        report("legacy: + device identity", reportsPerPass) { sink in
            for e in legacy {
                for r in try! HCIEventDecoder.decode(e) { sink &+= r.identity == nil ? 0 : 1 }
            }
        }
        report("extended: HCI framing + AD validation", reportsPerPass) { sink in
            for e in extended { sink &+= try! HCIEventDecoder.decode(e).count }
        }
        report("extended: + device identity", reportsPerPass) { sink in
            for e in extended {
                for r in try! HCIEventDecoder.decode(e) { sink &+= r.identity == nil ? 0 : 1 }
            }
        }
    }

    /// Runs `pass` repeatedly and prints the best rate in reports per second, both per second of
    /// wall-clock time and per second of this thread's CPU time (the machine is shared, so the
    /// CPU-time figure is the one that does not depend on what else runs).
    static func report(_ label: String, _ reportsPerPass: Int, _ pass: (inout Int) -> Void) {
        var sink = 0
        for _ in 0..<3 { pass(&sink) }  // warm up
        var bestWall = 0.0
        var bestCPU = 0.0
        for _ in 0..<5 {
            var passes = 0
            let wall0 = now(CLOCK_MONOTONIC)
            let cpu0 = now(CLOCK_THREAD_CPUTIME_ID)
            var wall = 0.0
            while wall < 0.5 {
                pass(&sink)
                passes += 1
                wall = now(CLOCK_MONOTONIC) - wall0
            }
            let cpu = now(CLOCK_THREAD_CPUTIME_ID) - cpu0
            bestWall = max(bestWall, Double(passes * reportsPerPass) / wall)
            bestCPU = max(bestCPU, Double(passes * reportsPerPass) / cpu)
        }
        func millions(_ rate: Double) -> String { String(format: "%.2f M", rate / 1e6) }
        print("  \(label): \(millions(bestCPU)) reports/s of CPU time, \(millions(bestWall)) reports/s wall  (sink \(sink % 10))")
    }

    static func now(_ clock: clockid_t) -> Double {
        var t = timespec()
        clock_gettime(clock, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// The ruuvitag captures' events plus beacon adverts; synthetic beacons only if the shared
    /// data is missing.
    static func corpus() -> [[UInt8]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        var events: [[UInt8]] = []
        for name in ["hcidump-2.x.txt", "hcidump-3.x.txt"] {
            let url = root.appendingPathComponent("shared/data/ruuvitag-sensor-hcidump/\(name)")
            if let text = try? String(contentsOf: url, encoding: .utf8) {
                events += HCIDumpCapture.packets(in: text).compactMap(\.bytes)
            }
        }
        if events.isEmpty { print("decode: shared capture not found next to the package; using beacon adverts only") }
        let beacons = [
            "02 01 06 1A FF 4C 00 02 15 E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0 00 01 00 01 C5",
            "02 01 06 03 03 AA FE 17 16 AA FE 00 E7 ED D1 EB EA C0 4E 5D EF A0 17 0B DB 87 53 9B 67 00 00",
            "02 01 06 1B FF 18 01 BE AC 2F 23 44 54 CF 6D 4A 0F AD F2 F4 91 1B A9 FF A6 00 01 00 02 C5 00",
            "03 03 AA FE 11 16 AA FE 20 00 0B B8 16 80 00 00 03 E8 00 00 27 10",
        ].map { Hex.decode($0)! }
        for i in 0..<200 {
            let ad = beacons[i % beacons.count]
            var report: [UInt8] = [0x03, 0x00, UInt8(i), 0x22, 0x33, 0x44, 0x55, 0x66, UInt8(ad.count)]
            report += ad
            report.append(0xC0)
            let header: [UInt8] = [0x04, 0x3E, UInt8(report.count + 2), 0x02, 0x01]
            events.append(header + report)
        }
        return events
    }

    /// The same report as an LE Extended Advertising Report event (legacy PDU bit set).
    static func toExtended(_ event: [UInt8]) -> [UInt8] {
        let r = try! HCIEventDecoder.decode(event)[0]
        let a = r.address.bytes.reversed()
        var report: [UInt8] = [UInt8(r.eventType) | 0x10, 0x00, r.address.type.rawValue]
        report += a
        report += [0x01, 0x00, 0xFF, 0x7F, UInt8(bitPattern: r.rssi ?? 127), 0, 0, 0, 0, 0, 0, 0, 0, 0]
        report.append(UInt8(r.data.count))
        report += r.data
        let header: [UInt8] = [0x04, 0x3E, UInt8(report.count + 2), 0x0D, 0x01]
        return header + report
    }
}
