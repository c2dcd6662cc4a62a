/// Accumulates an SVG document. Escapes text and attribute values; formats numbers compactly.
struct SVGWriter {
    private var body: [String] = []
    let width: Double
    let height: Double

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// Appends markup as is (the caller escapes what it interpolates).
    mutating func raw(_ markup: String) { body.append(markup) }

    /// Appends a `<text>` element with escaped content.
    /// `halo` draws a white outline behind the glyphs so labels stay legible over lines.
    mutating func text(_ content: String, x: Double, y: Double, size: Double, weight: String = "normal",
                       fill: String = "#222222", anchor: String = "start", cssClass: String, halo: Bool = false, region: String? = nil) {
        let outline = halo ? " stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\"" : ""
        let data = region.map { " data-region=\"\(SVGWriter.escape($0))\"" } ?? ""
        body.append("<text class=\"\(cssClass)\"\(data)\(outline) x=\"\(SVGWriter.n(x))\" y=\"\(SVGWriter.n(y))\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"\(SVGWriter.n(size))\" font-weight=\"\(weight)\" fill=\"\(fill)\" text-anchor=\"\(anchor)\">\(SVGWriter.escape(content))</text>")
    }

    /// Appends a laid-out label block, one centred `<text>` per line. `region` marks the lines of a
    /// region's label (`data-region`), so a page can find and update them.
    mutating func label(_ label: MapLabel, in box: MapBox, region: String?) {
        let x = box.x + box.width / 2
        for (line, baseline) in zip(label.lines, label.baselines(in: box)) {
            text(line.text, x: x, y: baseline, size: line.size, weight: line.weight, fill: line.fill, anchor: "middle",
                 cssClass: line.cssClass, halo: true, region: region)
        }
    }

    /// The complete document.
    func finish() -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(SVGWriter.n(width))\" height=\"\(SVGWriter.n(height))\" viewBox=\"0 0 \(SVGWriter.n(width)) \(SVGWriter.n(height))\">\n"
        out += body.joined(separator: "\n")
        out += "\n</svg>\n"
        return out
    }

    /// XML-escapes text for element content and double-quoted attributes.
    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // Control characters other than tab and newlines are not allowed in XML 1.0.
                if c.value < 0x20 && c != "\t" && c != "\n" && c != "\r" { out += "?" } else { out.unicodeScalars.append(c) }
            }
        }
        return out
    }

    /// A number with at most one decimal, no exponent.
    static func n(_ v: Double) -> String {
        let r = (v * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    static func hexColor(_ r: Int, _ g: Int, _ b: Int) -> String {
        func h(_ v: Int) -> String {
            let s = String(max(0, min(255, v)), radix: 16)
            return s.count == 1 ? "0" + s : s
        }
        return "#" + h(r) + h(g) + h(b)
    }
}
