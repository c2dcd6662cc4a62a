import Foundation
import WaymarkCore
import WaymarkProtobuf

extension Spool {
    /// Reads every segment back: intact records become entries (to be re-sent), damage is
    /// skipped and counted, empty segments are removed.
    func recover() throws(SpoolError) {
        let dir = configuration.directory
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: dir) } catch {
            throw SpoolError.system("list", dir, EACCES)
        }
        let numbers = names.compactMap { name -> Int? in
            guard name.hasPrefix("seg-"), name.hasSuffix(".wms") else { return nil }
            return Int(name.dropFirst(4).dropLast(4))
        }.sorted()
        let decoder = JSONDecoder()
        struct Key: Decodable { var boot: String; var seq: UInt64 }
        if let data = FileManager.default.contents(atPath: acksPath),
           let acks = try? decoder.decode([String: UInt64].self, from: data) {
            ackedUpTo = acks
        }
        for number in numbers {
            let file = path(number)
            guard let data = FileManager.default.contents(atPath: file) else { throw SpoolError.system("read", file, EACCES) }
            let scan = data.withUnsafeBytes { SpoolFrame.scan($0) }
            var live = 0
            var damaged = scan.damagedRegions
            for range in scan.payloads {
                // A record is a batch as published: JSON, or protobuf (`publish.encoding`; the
                // setting may have changed since it was written).
                let key: Key?
                if let first = data[range].first, !BatchEncoding.startsJSON(first) {
                    key = ProtobufBatchCoding.key(of: Array(data[range])).map { Key(boot: $0.boot, seq: $0.seq) }
                } else {
                    key = try? decoder.decode(Key.self, from: data[range])
                }
                guard let key else { damaged += 1; continue }
                if let acked = ackedUpTo[key.boot], key.seq <= acked { continue }
                entries.append(Entry(boot: key.boot, seq: key.seq, segment: number, offset: range.lowerBound,
                                      length: range.count, sentAt: nil, payload: nil))
                live += 1
                recovered += 1
            }
            damagedRegions += damaged
            if live == 0 {
                unlink(file)
            } else {
                segments[number] = Segment(bytes: data.count, live: live, records: live)
            }
        }
        nextSegment = (numbers.last ?? 0) + 1
        saveAcks()
    }

    var acksPath: String { configuration.directory + "/acked.json" }

    /// Persists the ack high-water marks of boots that still have records (temp file + rename,
    /// so the file is always whole; losing an update only means a duplicate resend).
    func saveAcks() {
        let boots = Set(entries.map(\.boot))
        ackedUpTo = ackedUpTo.filter { boots.contains($0.key) }
        if ackedUpTo.isEmpty {
            unlink(acksPath)
            return
        }
        guard let data = try? JSONEncoder().encode(ackedUpTo) else { return }
        let temp = acksPath + ".tmp"
        if FileManager.default.createFile(atPath: temp, contents: data) { rename(temp, acksPath) }
    }

    func openSegment() throws(SpoolError) {
        let number = nextSegment
        nextSegment += 1
        let file = path(number)
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw SpoolError.system("create", file) }
        if configuration.fsync {
            // Make the new directory entry durable too.
            let dfd = open(configuration.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dfd >= 0 { _ = fsync(dfd); Glibc.close(dfd) }
        }
        segments[number] = Segment(bytes: 0, live: 0, records: 0)
        current = (number, fd)
    }

    /// Drops whole oldest segments while over the cap, counting their unacked batches; the
    /// segment being written is kept (the cap may be exceeded by at most one segment).
    func enforceCap() {
        while totalBytes > configuration.maxBytes {
            guard let oldest = segments.keys.min(), oldest != current?.number else { return }
            let lost = entries.filter { $0.segment == oldest }.count
            entries.removeAll { $0.segment == oldest }
            dropped += lost
            segments[oldest] = nil
            unlink(path(oldest))
        }
    }

    func deleteEmptySegments() {
        for (number, segment) in segments where segment.live <= 0 {
            if number == current?.number { closeCurrent() }
            segments[number] = nil
            unlink(path(number))
        }
    }
}
