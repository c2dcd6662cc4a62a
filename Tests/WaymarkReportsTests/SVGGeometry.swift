import Foundation

/// The drawn geometry of an SVG document as a reader sees it: every circle and an estimated box
/// for every text, in document coordinates (group translations applied). Read with a small tag
/// scanner of its own, independent of the renderer's layout code.
struct SVGGeometry {
    struct Circle { var x, y, r: Double; var what: String }
    struct TextBox { var x, y, width, height: Double; var text: String; var cssClass: String; var region: String? }

    var circles: [Circle] = []
    var texts: [TextBox] = []

    /// Text extents: 0.6 em per character, glyphs from 0.8 em above the baseline to 0.25 em below.
    static let advance = 0.6, ascent = 0.8, descent = 0.25

    init(_ svg: String) throws {
        let tag = try NSRegularExpression(pattern: #"<(/?)([a-zA-Z]+)((?:\s+[\w:-]+="[^"]*")*)\s*(/?)>"#)
        let attribute = try NSRegularExpression(pattern: #"([\w:-]+)="([^"]*)""#)
        let ns = svg as NSString
        var offsets: [(Double, Double)] = [(0, 0)]
        var openText: (attributes: [String: String], contentStart: Int)?
        for match in tag.matches(in: svg, range: NSRange(location: 0, length: ns.length)) {
            let closing = ns.substring(with: match.range(at: 1)) == "/"
            let name = ns.substring(with: match.range(at: 2))
            let selfClosing = ns.substring(with: match.range(at: 4)) == "/"
            var attrs: [String: String] = [:]
            let attrText = ns.substring(with: match.range(at: 3))
            let a = attrText as NSString
            for m in attribute.matches(in: attrText, range: NSRange(location: 0, length: a.length)) {
                attrs[a.substring(with: m.range(at: 1))] = a.substring(with: m.range(at: 2))
            }
            let (dx, dy) = offsets.last!
            switch (name, closing) {
            case ("g", false):
                var t = (dx, dy)
                if let transform = attrs["transform"], transform.hasPrefix("translate(") {
                    let numbers = transform.dropFirst("translate(".count).dropLast().split(separator: ",").compactMap { Double($0) }
                    t = (dx + (numbers.first ?? 0), dy + (numbers.count > 1 ? numbers[1] : 0))
                }
                if !selfClosing { offsets.append(t) }
            case ("g", true):
                offsets.removeLast()
            case ("circle", false):
                circles.append(Circle(x: dx + Double(attrs["cx"] ?? "0")!, y: dy + Double(attrs["cy"] ?? "0")!,
                                      r: Double(attrs["r"] ?? "0")!, what: attrs["data-region"] ?? attrs["class"] ?? "circle"))
            case ("text", false):
                openText = (attrs, match.range.location + match.range.length)
            case ("text", true):
                guard let open = openText else { continue }
                openText = nil
                let content = Self.unescape(ns.substring(with: NSRange(location: open.contentStart, length: match.range.location - open.contentStart)))
                let size = Double(open.attributes["font-size"] ?? "16")!
                let width = Double(content.count) * size * Self.advance
                let x = dx + Double(open.attributes["x"] ?? "0")!, y = dy + Double(open.attributes["y"] ?? "0")!
                let left: Double
                switch open.attributes["text-anchor"] {
                case "middle": left = x - width / 2
                case "end": left = x - width
                default: left = x
                }
                texts.append(TextBox(x: left, y: y - size * Self.ascent, width: width, height: size * (Self.ascent + Self.descent),
                                     text: content, cssClass: open.attributes["class"] ?? "", region: open.attributes["data-region"]))
            default:
                break
            }
        }
    }

    static func unescape(_ s: String) -> String {
        s.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// Every pair that overlaps, described for a failure message: text/text, text/circle, circle/circle.
    func overlaps() -> [String] {
        var out: [String] = []
        for i in texts.indices {
            for j in texts.indices where j > i {
                let a = texts[i], b = texts[j]
                if a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height {
                    out.append("text \"\(a.text)\" overlaps text \"\(b.text)\"")
                }
            }
            for c in circles {
                let t = texts[i]
                let nx = min(max(c.x, t.x), t.x + t.width), ny = min(max(c.y, t.y), t.y + t.height)
                if (c.x - nx) * (c.x - nx) + (c.y - ny) * (c.y - ny) < c.r * c.r {
                    out.append("text \"\(t.text)\" overlaps circle \(c.what)")
                }
            }
        }
        for i in circles.indices {
            for j in circles.indices where j > i {
                let a = circles[i], b = circles[j]
                if ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot() < a.r + b.r {
                    out.append("circle \(a.what) overlaps circle \(b.what)")
                }
            }
        }
        return out
    }
}
