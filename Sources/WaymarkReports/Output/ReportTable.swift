/// The rows of one report with typed columns, ready for `ReportFormatter`.
public struct ReportTable: Equatable, Sendable {
    public var title: String
    public var columns: [ReportColumn]
    public var rows: [[ReportValue]]

    public init(title: String, columns: [ReportColumn], rows: [[ReportValue]] = []) {
        self.title = title
        self.columns = columns
        self.rows = rows
    }

    /// The index of the column named `name`.
    public func columnIndex(_ name: String) -> Int? { columns.firstIndex { $0.name == name } }

    /// The values of column `name` in row order (empty when there is no such column).
    public func values(_ name: String) -> [ReportValue] {
        guard let c = columnIndex(name) else { return [] }
        return rows.map { $0[c] }
    }
}

/// A named column and the type of its values.
public struct ReportColumn: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case text
        case integer
        case decimal
        case timestamp
        case boolean
    }

    public var name: String
    public var kind: Kind

    public init(_ name: String, _ kind: Kind) {
        self.name = name
        self.kind = kind
    }
}

/// One cell. Timestamps are kept as ISO-8601 UTC text (`2026-06-01T09:00:00Z`).
public enum ReportValue: Equatable, Sendable {
    case null
    case text(String)
    case integer(Int64)
    case decimal(Double)
    case timestamp(String)
    case boolean(Bool)

    /// Converts PostgreSQL's text output of a value into a typed cell; nil input is SQL NULL.
    /// Throws when the text does not fit the column's type (a schema that drifted from the code).
    public static func fromPostgres(_ text: String?, kind: ReportColumn.Kind, column: String) throws(ReportError) -> ReportValue {
        guard let text else { return .null }
        func bad() -> ReportError {
            ReportError(.schema, "column '\(column)': '\(text)' is not a \(kind.rawValue); run `waymark db migrate` so the report functions match this program")
        }
        switch kind {
        case .text: return .text(text)
        case .integer:
            guard let v = Int64(text) else { throw bad() }
            return .integer(v)
        case .decimal:
            guard let v = Double(text) else { throw bad() }
            return .decimal(v)
        case .boolean:
            switch text {
            case "t", "true": return .boolean(true)
            case "f", "false": return .boolean(false)
            default: throw bad()
            }
        case .timestamp:
            guard let iso = isoTimestamp(fromPostgres: text) else { throw bad() }
            return .timestamp(iso)
        }
    }

    /// `2026-06-01 09:00:00+00` (DateStyle ISO, TimeZone UTC) → `2026-06-01T09:00:00Z`.
    static func isoTimestamp(fromPostgres text: String) -> String? {
        var t = text
        if t.hasSuffix("+00") { t.removeLast(3) } else { return nil }
        if let dot = t.firstIndex(of: ".") { t = String(t[..<dot]) }
        guard t.count == 19 else { return nil }
        return t.split(separator: " ").joined(separator: "T") + "Z"
    }

    /// The value as plain text (empty for NULL), as it appears in tables and CSV.
    public var plainText: String {
        switch self {
        case .null: ""
        case .text(let s), .timestamp(let s): s
        case .integer(let v): String(v)
        case .decimal(let v): ReportValue.format(v)
        case .boolean(let b): b ? "true" : "false"
        }
    }

    /// Decimals with at most 3 fractional digits and no exponent, so tables line up.
    static func format(_ v: Double) -> String {
        guard v.isFinite else { return v.isNaN ? "NaN" : (v > 0 ? "Infinity" : "-Infinity") }
        let scaled = (v * 1000).rounded()
        let negative = scaled < 0
        let magnitude = Int64(abs(scaled))
        let whole = magnitude / 1000
        var frac = String(magnitude % 1000)
        while frac.count < 3 { frac = "0" + frac }
        while frac.hasSuffix("0") { frac.removeLast() }
        return (negative && magnitude != 0 ? "-" : "") + String(whole) + (frac.isEmpty ? "" : "." + frac)
    }

    public var integerValue: Int64? { if case .integer(let v) = self { v } else { nil } }
    public var decimalValue: Double? {
        switch self {
        case .decimal(let v): v
        case .integer(let v): Double(v)
        default: nil
        }
    }
    public var textValue: String? {
        switch self {
        case .text(let s), .timestamp(let s): s
        default: nil
        }
    }
}
