import ArgumentParser

@main
struct Waymark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "waymark",
        abstract: "Multi-gateway passive tracking of Bluetooth LE beacons.",
        subcommands: [SiteCommand.self, DecodeCommand.self, ReplayCommand.self, DBCommand.self, SimulateCommand.self, EvaluateCommand.self, ReportCommand.self, ServeCommand.self, DemoCommand.self,
                      BridgeCommand.self, HomeAssistantCommand.self])
}
