import WaymarkCore

/// An axis-aligned rectangle in SVG user units (y down): what a label occupies.
public struct MapBox: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var center: Point { Point(x: x + width / 2, y: y + height / 2) }

    /// Whether the two boxes share any area (touching edges do not count).
    public func intersects(_ other: MapBox) -> Bool {
        x < other.maxX && other.x < maxX && y < other.maxY && other.y < maxY
    }

    /// Whether the box and the disc share any area.
    public func intersects(circle center: Point, radius: Double) -> Bool {
        let nx = min(max(center.x, x), maxX), ny = min(max(center.y, y), maxY)
        let dx = center.x - nx, dy = center.y - ny
        return dx * dx + dy * dy < radius * radius
    }

    /// Whether the segment a–b passes through the box (Liang–Barsky clipping).
    public func intersects(segmentFrom a: Point, to b: Point) -> Bool {
        var t0 = 0.0, t1 = 1.0
        let dx = b.x - a.x, dy = b.y - a.y
        for (p, q) in [(-dx, a.x - x), (dx, maxX - a.x), (-dy, a.y - y), (dy, maxY - a.y)] {
            if p == 0 {
                if q < 0 { return false }
            } else {
                let r = q / p
                if p < 0 { t0 = max(t0, r) } else { t1 = min(t1, r) }
                if t0 > t1 { return false }
            }
        }
        return true
    }

    public func inflated(by d: Double) -> MapBox {
        MapBox(x: x - d, y: y - d, width: width + 2 * d, height: height + 2 * d)
    }

    /// The smallest box holding both.
    public func union(_ other: MapBox) -> MapBox {
        let minX = min(x, other.x), minY = min(y, other.y)
        return MapBox(x: minX, y: minY, width: max(maxX, other.maxX) - minX, height: max(maxY, other.maxY) - minY)
    }
}

/// Text extents without a font engine: a generous average advance per character (DejaVu Sans,
/// the font the map names first, averages about 0.55 em on mixed-case words) and the line's
/// ascent and descent. Labels are laid out with these boxes, so they err on the wide side.
public enum MapTextMetrics {
    /// Advance per character, in em.
    public static let advance = 0.62
    /// Height of a line slot, in em; the glyphs sit from `ascent` above the baseline to
    /// `descent` below it.
    public static let lineHeight = 1.25
    public static let ascent = 0.95
    public static let descent = 0.3

    public static func width(_ text: String, size: Double) -> Double {
        Double(text.count) * size * advance
    }
}
