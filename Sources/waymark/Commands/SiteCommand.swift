import ArgumentParser
import WaymarkConfig
import WaymarkCore

struct SiteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "site", abstract: "Work with site files.", subcommands: [Check.self, Calibrate.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a site file and print a summary of the venue and its beacon graph.")

        @Argument(help: "The site file (YAML).") var file: String

        func run() throws {
            do {
                let (site, warnings) = try SiteLoader.load(path: file)
                for w in warnings { printError(w.description) }
                print("\(file): ok — site '\(site.id)': \(site.gateways.count) gateways, \(site.regions.count) regions, \(site.edges.count) edges, monitored set size \(site.fusion.monitoredSetSize)")
            } catch {
                for d in error.diagnostics { printError(d.description) }
                let n = error.diagnostics.filter { $0.severity == .error }.count
                printError("\(file): \(n) error\(n == 1 ? "" : "s")")
                throw ExitCode(1)
            }
        }
    }
}
