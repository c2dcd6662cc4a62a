import WaymarkCore

/// A block of one or more centred text lines drawn as a unit (a region's name and its count).
struct MapLabel: Sendable, Equatable {
    struct Line: Sendable, Equatable {
        var text: String
        var size: Double
        var cssClass: String
        var fill: String
        var weight: String = "normal"
        /// Width kept for at least this many characters (text updated in place later).
        var minChars: Int = 0
    }

    var lines: [Line]
    /// Padding kept clear around the glyphs, in user units.
    static let padding = 2.0

    var width: Double {
        (lines.map { max(MapTextMetrics.width($0.text, size: $0.size), Double($0.minChars) * $0.size * MapTextMetrics.advance) }.max() ?? 0)
            + 2 * MapLabel.padding
    }
    var height: Double { lines.reduce(0) { $0 + $1.size * MapTextMetrics.lineHeight } + 2 * MapLabel.padding }

    /// The box of the block when centred on `center`.
    func box(centeredAt center: Point) -> MapBox {
        MapBox(x: center.x - width / 2, y: center.y - height / 2, width: width, height: height)
    }

    /// Each line's baseline, for the block placed in `box`.
    func baselines(in box: MapBox) -> [Double] {
        var top = box.y + MapLabel.padding
        return lines.map { line in
            defer { top += line.size * MapTextMetrics.lineHeight }
            return top + line.size * MapTextMetrics.ascent
        }
    }

    /// Splits a name into lines of at most `limit` characters at spaces (a longer word stays whole).
    static func wrap(_ text: String, limit: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if current.isEmpty {
                current = String(word)
            } else if current.count + 1 + word.count <= limit {
                current += " " + word
            } else {
                lines.append(current)
                current = String(word)
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines.isEmpty ? [""] : lines
    }
}
