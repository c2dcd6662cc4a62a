/// Renders a `ReportTable` as an aligned text table, CSV (RFC 4180) or JSON.
public enum ReportFormatter {
    /// The table in `format`, ending with a newline.
    public static func render(_ table: ReportTable, as format: ReportFormat) -> String {
        switch format {
        case .table: text(table)
        case .csv: csv(table)
        case .json: json(table)
        }
    }

    /// A title line, a header, a rule and the rows; numbers right-aligned; a row count at the end.
    public static func text(_ table: ReportTable) -> String {
        let cells = table.rows.map { $0.map(\.plainText) }
        var widths = table.columns.map(\.name.count)
        for row in cells {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ values: [String]) -> String {
            var parts: [String] = []
            for (i, v) in values.enumerated() {
                let pad = String(repeating: " ", count: widths[i] - v.count)
                let numeric = table.columns[i].kind == .integer || table.columns[i].kind == .decimal
                parts.append(numeric ? pad + v : v + pad)
            }
            var s = parts.joined(separator: "  ")
            while s.hasSuffix(" ") { s.removeLast() }
            return s
        }
        var out = table.title + "\n\n"
        out += line(table.columns.map(\.name)) + "\n"
        out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        for row in cells { out += line(row) + "\n" }
        out += "(\(table.rows.count) row\(table.rows.count == 1 ? "" : "s"))\n"
        return out
    }

    /// A header row and one line per row, CRLF-free (`\n`), fields quoted only when they contain a
    /// comma, a double quote, a line break or leading/trailing space.
    public static func csv(_ table: ReportTable) -> String {
        var out = table.columns.map { csvField($0.name) }.joined(separator: ",") + "\n"
        for row in table.rows {
            out += row.map { csvField($0.plainText) }.joined(separator: ",") + "\n"
        }
        return out
    }

    /// One CSV field, quoted and with doubled quotes when needed.
    public static func csvField(_ s: String) -> String {
        let needsQuotes = s.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
            || s.first == " " || s.last == " "
        guard needsQuotes else { return s }
        return "\"" + s.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// `{"report": title, "columns": [{name, type}], "rows": [{column: value}]}` with typed values:
    /// numbers as JSON numbers, booleans as booleans, NULL as null, everything else as strings.
    public static func json(_ table: ReportTable) -> String {
        var out = "{\"report\":\(jsonString(table.title)),\"columns\":["
        out += table.columns.map { "{\"name\":\(jsonString($0.name)),\"type\":\"\($0.kind.rawValue)\"}" }
            .joined(separator: ",")
        out += "],\"rows\":["
        var first = true
        for row in table.rows {
            out += first ? "\n" : ",\n"
            first = false
            var fields: [String] = []
            for (i, value) in row.enumerated() where i < table.columns.count {
                fields.append("\(jsonString(table.columns[i].name)):\(jsonValue(value))")
            }
            out += "{" + fields.joined(separator: ",") + "}"
        }
        out += first ? "]}\n" : "\n]}\n"
        return out
    }

    static func jsonValue(_ v: ReportValue) -> String {
        switch v {
        case .null: "null"
        case .integer(let i): String(i)
        case .decimal(let d): d.isFinite ? ReportValue.format(d) : "null"
        case .boolean(let b): b ? "true" : "false"
        case .text(let s), .timestamp(let s): jsonString(s)
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    public static func jsonString(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x2028 || u.value == 0x2029 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }
}
