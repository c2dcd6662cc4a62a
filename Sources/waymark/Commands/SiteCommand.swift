import ArgumentParser
import WaymarkConfig
import WaymarkCore

struct SiteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "site", abstract: "Work with site files.", subcommands: [Check.self, Calibrate.self])

    struct Check: ParsableCommand {
        /// One line per rule: what it watches and how often it may fire.
        static func describe(_ rule: NotificationRule, site: Site) -> String {
            let regions = site.regions.map(\.id).filter { rule.regions.contains($0) }
            let shown = regions.count == site.regions.count ? "all \(regions.count) regions"
                : regions.count > 4 ? "\(regions.count) regions (\(regions.prefix(3).joined(separator: ", ")), …)"
                : regions.joined(separator: ", ")
            var when = rule.trigger.rawValue
            switch rule.trigger {
            case .dwell: when += " after \(Int(rule.dwellS)) s"
            case .return: when += " after \(Int(rule.absenceS)) s away"
            case .exit where rule.absenceS > 0: when += " once away \(Int(rule.absenceS)) s"
            default: break
            }
            var parts = ["\(when) \(shown)", "cool-down \(Int(rule.cooldownS)) s"]
            if !rule.quietHours.isEmpty { parts.append("quiet \(rule.quietHours.map(\.description).joined(separator: ", ")) \(site.timeZone)") }
            if rule.minConfidence > 0 { parts.append("min confidence \(rule.minConfidence)") }
            if rule.webhook != nil { parts.append("webhook") }
            return parts.joined(separator: "; ")
        }

        static let configuration = CommandConfiguration(
            abstract: "Validate a site file and print a summary of the venue and its beacon graph.")

        @Argument(help: "The site file (YAML).") var file: String

        func run() throws {
            do {
                let (site, warnings) = try SiteLoader.load(path: file)
                for w in warnings { printError(w.description) }
                print("\(file): ok — site '\(site.id)': \(site.gateways.count) gateways, \(site.regions.count) regions, \(site.edges.count) edges, monitored set size \(site.fusion.monitoredSetSize)")
                for rule in site.notifications {
                    print("  notification rule '\(rule.id)': \(Self.describe(rule, site: site))")
                }
            } catch {
                for d in error.diagnostics { printError(d.description) }
                let n = error.diagnostics.filter { $0.severity == .error }.count
                printError("\(file): \(n) error\(n == 1 ? "" : "s")")
                throw ExitCode(1)
            }
        }
    }
}
