import Foundation
import Testing
import WaymarkCore
@testable import WaymarkEdge

@Suite struct SpoolTests {
    func payload(_ boot: String, _ seq: UInt64, size: Int = 40) -> [UInt8] {
        let head = "{\"boot\":\"\(boot)\",\"seq\":\(seq),\"pad\":\""
        return Array((head + String(repeating: "x", count: max(0, size - head.count - 2)) + "\"}").utf8)
    }

    func files(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".wms") }.sorted()
    }

    @Test("frames: a torn tail and a corrupted middle record are skipped; the others survive")
    func framing() {
        var bytes: [UInt8] = []
        for i in 0..<5 { bytes += SpoolFrame.encode(Array("record-\(i)".utf8)) }
        let recordSize = SpoolFrame.headerSize + 8
        bytes[2 * recordSize + SpoolFrame.headerSize + 3] ^= 0xFF   // damage record 2's payload
        bytes += Array(SpoolFrame.encode(Array("torn-record".utf8)).prefix(15))   // power cut mid-append
        let scan = bytes.withUnsafeBytes { SpoolFrame.scan($0) }
        let texts = scan.payloads.map { String(decoding: bytes[$0], as: UTF8.self) }
        #expect(texts == ["record-0", "record-1", "record-3", "record-4"])
        #expect(scan.damagedRegions == 2)
        #expect(scan.skippedBytes == recordSize + 15)
    }

    @Test("append, send, ack deletes; unacked batches come back after a reopen")
    func ackAndRecover() throws {
        let dir = EdgeTestData.temporaryDirectory("spool")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let spool = try Spool(.init(directory: dir, segmentBatches: 2, fsync: false))
            for seq in 1...5 { try spool.append(payload("b1", UInt64(seq)), boot: "b1", seq: UInt64(seq)) }
            #expect(spool.depth == 5)
            #expect(files(dir).count == 3)
            #expect(spool.takeDue(now: 100, resendAfter: 10, limit: 100).map(\.seq) == [1, 2, 3, 4, 5])
            #expect(spool.takeDue(now: 105, resendAfter: 10, limit: 100).isEmpty)
            #expect(spool.takeDue(now: 111, resendAfter: 10, limit: 2).map(\.seq) == [1, 2])
            #expect(spool.acknowledge(boot: "other", seq: 10) == 0)
            #expect(spool.acknowledge(boot: "b1", seq: 3) == 3)
            #expect(spool.depth == 2)
            #expect(files(dir).count == 2)   // segment 1 (seq 1, 2) deleted; segment 2 holds seq 4
            let entry = try #require(spool.entries.first)
            #expect(try spool.payload(of: entry) == payload("b1", 4))
            spool.close()
        }
        let reopened = try Spool(.init(directory: dir, segmentBatches: 2, fsync: false))
        #expect(reopened.recovered == 2)
        #expect(reopened.entries.map(\.seq) == [4, 5])
        let due = reopened.takeDue(now: 0, resendAfter: 10, limit: 10)
        #expect(try due.map { try reopened.payload(of: $0) } == [payload("b1", 4), payload("b1", 5)])
        #expect(reopened.acknowledge(boot: "b1", seq: 5) == 2)
        #expect(files(dir).isEmpty)
    }

    @Test("a resend request makes exactly the asked batches due at once, ahead of their timer")
    func resendRequest() throws {
        let dir = EdgeTestData.temporaryDirectory("spool")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let spool = try Spool(.init(directory: dir, segmentBatches: 2, fsync: false))
        for seq in 1...6 { try spool.append(payload("b1", UInt64(seq)), boot: "b1", seq: UInt64(seq)) }
        #expect(spool.takeDue(now: 100, resendAfter: 30, limit: 100).count == 6)
        // The aggregator has 1…2 committed and holds 5…6 behind a gap: it asks for 3 and 4.
        let ack = try JSONDecoder().decode(GatewayAck.self, from: Data(#"{"boot":"b1","seq":2,"resend_from":3,"resend_to":5}"#.utf8))
        #expect(ack.resendRange == 3..<5)
        #expect(spool.acknowledge(boot: ack.boot, seq: ack.seq) == 2)
        #expect(spool.markDue(boot: "other", range: ack.resendRange) == 0)
        #expect(spool.markDue(boot: ack.boot, range: ack.resendRange) == 2)
        #expect(spool.takeDue(now: 101, resendAfter: 30, limit: 100).map(\.seq) == [3, 4])
        #expect(spool.takeDue(now: 102, resendAfter: 30, limit: 100).isEmpty)
        // A plain ack asks for nothing.
        #expect(GatewayAck(boot: "b1", seq: 4).resendRange.isEmpty)
    }

    @Test("a torn write at the end of a segment is skipped at start without losing earlier batches")
    func tornWrite() throws {
        let dir = EdgeTestData.temporaryDirectory("torn")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let spool = try Spool(.init(directory: dir, segmentBatches: 100, fsync: false))
        for seq in 1...3 { try spool.append(payload("b", UInt64(seq)), boot: "b", seq: UInt64(seq)) }
        spool.close()
        let file = dir + "/" + files(dir)[0]
        let handle = try #require(FileHandle(forWritingAtPath: file))
        handle.seekToEndOfFile()
        handle.write(Data(SpoolFrame.encode(payload("b", 4)).prefix(20)))
        try handle.close()
        let reopened = try Spool(.init(directory: dir, segmentBatches: 100, fsync: false))
        #expect(reopened.entries.map(\.seq) == [1, 2, 3])
        #expect(reopened.damagedRegions == 1)
        // New batches go to a fresh segment, never after the damage.
        try reopened.append(payload("c", 1), boot: "c", seq: 1)
        #expect(files(dir).count == 2)
    }

    @Test("over the size cap the oldest batches are dropped, and exactly those are counted")
    func cap() throws {
        let dir = EdgeTestData.temporaryDirectory("cap")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let frame = SpoolFrame.headerSize + 100
        let spool = try Spool(.init(directory: dir, maxBytes: 5 * frame, segmentBatches: 1, fsync: false))
        for seq in 1...12 { try spool.append(payload("b", UInt64(seq), size: 100), boot: "b", seq: UInt64(seq)) }
        #expect(spool.dropped == 7)
        #expect(spool.entries.map(\.seq) == [8, 9, 10, 11, 12])
        #expect(spool.totalBytes == 5 * frame)
        #expect(files(dir).count == 5)
        // Acked batches are not "dropped" when their segment goes.
        _ = spool.acknowledge(boot: "b", seq: 9)
        for seq in 13...15 { try spool.append(payload("b", UInt64(seq), size: 100), boot: "b", seq: UInt64(seq)) }
        #expect(spool.dropped == 8)
        #expect(spool.entries.map(\.seq) == [11, 12, 13, 14, 15])
    }

    @Test("an unwritable spool directory is reported with the fix")
    func unwritable() throws {
        guard getuid() != 0 else { return }   // root can write anywhere
        let error = #expect(throws: SpoolError.self) { try Spool(.init(directory: "/proc/waymark-spool")) }
        #expect(error?.description.contains("spool.dir") == true)
    }
}
