import ArgumentParser
import Foundation
import WaymarkConfig
import WaymarkCore

/// Writes a line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Loads and validates a site file for a command: warnings go to standard error; errors are
/// printed with their field paths and end the command with exit status 1.
func loadSiteOrExit(_ path: String) throws -> Site {
    do {
        let (site, warnings) = try SiteLoader.load(path: path)
        for w in warnings { printError(w.description) }
        return site
    } catch {
        for d in error.diagnostics { printError(d.description) }
        throw ExitCode(1)
    }
}
