/// A notification's text with placeholders: `Welcome to {region_name}!`. `{{` and `}}` stand for
/// literal braces. Parsed once by the site validator, which rejects unknown placeholders; filled
/// in by WaymarkNotify for each notification.
public struct MessageTemplate: Hashable, Sendable, CustomStringConvertible {
    /// What a placeholder stands for.
    public enum Field: String, Sendable, CaseIterable {
        /// The device id.
        case device
        /// The rule's id.
        case rule
        /// enter, exit, dwell or return.
        case event
        /// The region's id and its name from the site file.
        case region
        case regionName = "region_name"
        /// How long the device had been in the rule's regions, as text (`12 min`) or seconds.
        case dwell
        case dwellS = "dwell_s"
        /// `return`: how long the device had been away, as text or seconds.
        case absence
        case absenceS = "absence_s"
        /// The notification's time in the site's time zone: `14:05`, `2026-06-01`, and ISO 8601
        /// with the offset, `2026-06-01T14:05:09+02:00`.
        case time
        case date
        case datetime
    }

    public enum Segment: Hashable, Sendable {
        case text(String)
        case field(Field)
    }

    public let segments: [Segment]
    /// The template as written.
    public let source: String

    public init(segments: [Segment], source: String) {
        self.segments = segments
        self.source = source
    }

    public var description: String { source }

    /// Parses `text`; on failure, a message that says what is wrong and how to write it.
    public static func parse(_ text: String) -> Result<MessageTemplate, TemplateError> {
        var segments: [Segment] = []
        var literal = ""
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            let next = text.index(after: i)
            if c == "{" {
                if next < text.endIndex && text[next] == "{" {
                    literal.append("{")
                    i = text.index(after: next)
                    continue
                }
                guard let close = text[next...].firstIndex(of: "}") else {
                    return .failure(.init("'{' without a closing '}'; write {{ for a literal brace"))
                }
                let name = String(text[next..<close])
                guard let field = Field(rawValue: name) else {
                    return .failure(.init("unknown placeholder {\(name)}; use one of \(Field.allCases.map { "{\($0.rawValue)}" }.joined(separator: ", ")), or {{ for a literal brace"))
                }
                if !literal.isEmpty { segments.append(.text(literal)); literal = "" }
                segments.append(.field(field))
                i = text.index(after: close)
            } else if c == "}" {
                guard next < text.endIndex && text[next] == "}" else {
                    return .failure(.init("'}' without an opening '{'; write }} for a literal brace"))
                }
                literal.append("}")
                i = text.index(after: next)
            } else {
                literal.append(c)
                i = next
            }
        }
        if !literal.isEmpty { segments.append(.text(literal)) }
        return .success(MessageTemplate(segments: segments, source: text))
    }

    /// The message a rule without `message:` sends.
    public static func defaultMessage(for trigger: NotificationRule.Trigger) -> MessageTemplate {
        let text = switch trigger {
        case .enter: "Entered {region_name}"
        case .exit: "Left {region_name} after {dwell}"
        case .dwell: "In {region_name} for {dwell}"
        case .return: "Back in {region_name} after {absence}"
        }
        // The defaults are valid templates.
        return (try? parse(text).get())!
    }

    /// Why a template does not parse.
    public struct TemplateError: Error, Sendable {
        public var message: String
        init(_ message: String) { self.message = message }
    }
}
