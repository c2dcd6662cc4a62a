import Foundation
import WaymarkCore
import WaymarkFusion

extension SiteCommand.Calibrate {
    /// A problem in the truth file, with the line it is on and how to write it instead.
    struct TruthError: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads the stays of a walk test: JSONL, one
    /// `{"type":"truth","device":"…","region":"…","entered":…,"exited":…}` per stay (the format
    /// `waymark simulate --truth` writes and `waymark evaluate` reads; `type` may be left out),
    /// times in Unix seconds or ISO-8601 with a zone. Other types (`presence`) and blank lines are
    /// skipped. Any other problem stops with the line's number: a truth file is short and written
    /// by hand, and a wrong line would teach the calibration wrong places. (`EvaluationReader`
    /// reads the same format for `waymark evaluate`, but skips and counts bad lines and unknown
    /// regions, without their line numbers, as scoring should.)
    static func teacher(path: String, site: Site) throws -> CalibrationTeacher {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TruthError(description: "\(path): cannot open the truth file")
        }
        var stays: [DeviceID: [CalibrationTeacher.Stay]] = [:]
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (i, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty else { continue }
            func fail(_ what: String) -> TruthError { TruthError(description: "\(path):\(i + 1): \(what)") }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw fail("not a JSON object; write one stay per line, e.g. "
                           + #"{"type":"truth","device":"mac:02-00-00-00-00-01","region":"kitchen","entered":"2026-11-29T10:00:00Z","exited":"2026-11-29T10:00:30Z"}"#)
            }
            let type = object["type"] as? String ?? "truth"
            guard type == "truth" else { continue }
            guard let deviceText = object["device"] as? String, let device = DeviceID(deviceText) else {
                throw fail("\"device\" must be a device id as the sightings name it (mac:aa-bb-cc-dd-ee-ff, ibeacon:<uuid>:<major>:<minor>, …)")
            }
            guard let regionID = object["region"] as? String else { throw fail("\"region\" must be a region id of the site") }
            guard let region = site.regionIndex(regionID) else {
                throw fail("unknown region '\(regionID)'; the site's regions: \(site.regions.map(\.id).joined(separator: ", "))")
            }
            guard let from = time(object["entered"]), let to = time(object["exited"]) else {
                throw fail("\"entered\" and \"exited\" must be Unix seconds (not milliseconds) or ISO-8601 times with a zone (2026-11-29T10:00:00Z)")
            }
            guard to >= from else { throw fail("\"exited\" is before \"entered\"") }
            stays[device, default: []].append(.init(region: Int32(region), from: from, to: to))
        }
        guard !stays.isEmpty else {
            throw TruthError(description: "\(path): no stays in the truth file (one {\"type\":\"truth\",…} line per stay)")
        }
        return CalibrationTeacher(stays: stays)
    }

    static let doubtfulShown = 10

    /// The stays whose whole seconds the engine's live region put elsewhere more often than not,
    /// longest first, each as "region from–to: there N % of its seconds, mostly in R".
    static func doubtfulStays(_ teacher: CalibrationTeacher, lives: [FusionOutput.LiveLocation], site: Site) -> [String] {
        var byDevice: [DeviceID: [FusionOutput.LiveLocation]] = [:]
        for l in lives { byDevice[l.device, default: []].append(l) }
        let format = ISO8601DateFormatter()
        var out: [(seconds: Int, line: String)] = []
        for (device, stays) in teacher.stays.sorted(by: { $0.key < $1.key }) {
            let live = (byDevice[device] ?? []).sorted { $0.t < $1.t }
            for stay in stays {
                let region = site.regions[Int(stay.region)].id
                var here = 0, total = 0
                var elsewhere: [String: Int] = [:]
                var second = stay.from.rounded(.up)
                while second + 1 <= stay.to {
                    // The live region at the middle of the second: the last one published before it.
                    let mid = second + 0.5
                    var lo = 0, hi = live.count
                    while lo < hi { let m = (lo + hi) / 2; if live[m].t <= mid { lo = m + 1 } else { hi = m } }
                    let at = lo > 0 ? live[lo - 1].region : nil
                    total += 1
                    if at == region { here += 1 } else { elsewhere[at ?? "no region", default: 0] += 1 }
                    second += 1
                }
                guard total > 0, here * 2 < total else { continue }
                let mostly = elsewhere.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key ?? "no region"
                let span = "\(format.string(from: Date(timeIntervalSince1970: stay.from)))–\(format.string(from: Date(timeIntervalSince1970: stay.to)))"
                // Not the device's id: the region and times name the stay, and ids stay out of output.
                out.append((total, "\(region) \(span): there \(100 * here / total) % of its \(total) s, mostly in \(mostly)"))
            }
        }
        return out.enumerated().sorted { ($0.element.seconds, -$0.offset) > ($1.element.seconds, -$1.offset) }.map(\.element.line)
    }

    private static func time(_ value: Any?) -> Double? {
        let seconds: Double?
        if let n = value as? NSNumber {
            seconds = n.doubleValue
        } else if let s = value as? String {
            seconds = UnixSeconds.parse(iso8601: s)
        } else {
            seconds = nil
        }
        // Between 2000 and 2100: milliseconds, or a bare number of seconds into the day, are not times.
        guard let seconds, seconds.isFinite, (946_684_800.0...4_102_444_800.0).contains(seconds) else { return nil }
        return seconds
    }
}
