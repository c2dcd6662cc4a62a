import WaymarkReports

extension ReportTruth {
    /// paths: "journey|<path>" or "subpath<n>|<path>" → occurrences, share.
    func paths() -> [String: [Double]] {
        var counts: [String: Int64] = [:]
        var totals: [String: Int64] = [:]
        for j in fixture.journeys where inRange(j.started, .day) {
            var pieces: [(String, [String])] = [("journey", j.regions)]
            for n in 2...4 where j.regions.count >= n {
                for i in 0...(j.regions.count - n) { pieces.append(("subpath\(n)", Array(j.regions[i..<(i + n)]))) }
            }
            for (group, path) in pieces {
                totals[group, default: 0] += 1
                if let region, !path.contains(region) { continue }
                counts["\(group)|\(path.joined(separator: " > "))", default: 0] += 1
            }
        }
        return counts.mapValues { n in [Double(n)] }.reduce(into: [:]) { out, item in
            let group = String(item.key.prefix { $0 != "|" })
            out[item.key] = [item.value[0], item.value[0] / Double(totals[group]!)]
        }
    }

    /// capture: heard, visitors, passers-by, capture rate per period and entrance region.
    func capture() -> [Key: [Double]] {
        var heard: [Key: Set<String>] = [:]
        for h in fixture.heard where inRange(h.hour) && regionMatches(h.region) {
            heard[Key(period: ReportDate.iso(floorP(h.hour)), region: h.region), default: []].insert(h.device)
        }
        var inside: [String: Set<String>] = [:]
        for v in fixture.visits { inside[ReportDate.iso(floorP(v.entered)), default: []].insert(v.device) }
        return heard.mapValues { _ in [] }.reduce(into: [:]) { out, item in
            let devices = heard[item.key]!
            let visitors = devices.intersection(inside[item.key.period] ?? []).count
            out[item.key] = [Double(devices.count), Double(visitors), Double(devices.count - visitors),
                             Double(visitors) / Double(devices.count)]
        }
    }

    /// loyalty: devices, new, returning, returning share per period (site-wide).
    func loyalty() -> [String: [Double]] {
        var first: [String: Int64] = [:]
        for v in fixture.visits { first[v.device] = min(first[v.device] ?? .max, v.entered) }
        var active: [String: Set<String>] = [:]
        for v in fixture.visits where inRange(v.entered) { active[ReportDate.iso(floorP(v.entered)), default: []].insert(v.device) }
        return active.reduce(into: [:]) { out, item in
            let new = item.value.filter { ReportDate.iso(floorP(first[$0]!)) == item.key }.count
            let devices = item.value.count
            out[item.key] = [Double(devices), Double(new), Double(devices - new), Double(devices - new) / Double(devices)]
        }
    }

    /// heatmap: [ISO day of week 1…7][hour 0…23] visits.
    func heatmap() -> [[Int64]] {
        var grid = Array(repeating: Array(repeating: Int64(0), count: 24), count: 8)
        for v in fixture.visits where inRange(v.entered, .hour) && regionMatches(v.region) {
            let day = Self.floor(v.entered, .day) / 86_400
            let dow = Int(((day + 3) % 7 + 7) % 7) + 1
            grid[dow][Int((v.entered - Self.floor(v.entered, .day)) / 3600)] += 1
        }
        return grid
    }

    /// gateways: per gateway id, [state, last seen, online s, batches, sightings, rejected, dropped,
    /// depth last, depth max] as text ("" for NULL), the range ending before now.
    func gateways() -> [String: [String]] {
        var out: [String: [String]] = [:]
        for g in fixture.site.gateways {
            let st = fixture.statuses.filter { $0.gateway == g.id && $0.at < to }.sorted { $0.at < $1.at }
            var online: Int64 = 0
            for (i, s) in st.enumerated() where s.online {
                let next = i + 1 < st.count ? st[i + 1].at : to
                if next > from { online += min(next, to) - max(s.at, from) }
            }
            let lastBatch = fixture.ingest.filter { $0.gateway == g.id && $0.hour < to }.map(\.last).max()
            let lastOnline = st.filter(\.online).map(\.at).max()
            let lastSeen = [lastBatch, lastOnline].compactMap { $0 }.max()
            let hours = fixture.ingest.filter { $0.gateway == g.id && inRange($0.hour, .hour) }
            let rejected = fixture.rejections.filter { $0.gateway == g.id && inRange($0.hour, .hour) }.map(\.count).reduce(0, +)
            var dropped = 0
            for boot in Set(st.compactMap(\.boot)) {
                let within = st.filter { $0.boot == boot && $0.at >= from }.compactMap(\.dropped).max()
                let before = st.filter { $0.boot == boot && $0.at < from }.compactMap(\.dropped).max() ?? 0
                if let within { dropped += within - before }
            }
            let depthMax = st.filter { $0.at >= from }.compactMap(\.depth).max()
            out[g.id] = [st.last.map { $0.online ? "online" : "offline" } ?? "unknown",
                         lastSeen.map(ReportDate.iso) ?? "", String(online),
                         String(hours.map(\.batches).reduce(0, +)), String(hours.map(\.sightings).reduce(0, +)),
                         String(rejected), String(dropped), st.last?.depth.map(String.init) ?? "", depthMax.map(String.init) ?? ""]
        }
        return out
    }
}
