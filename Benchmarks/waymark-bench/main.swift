// Benchmarks print figures; they never assert. Run: swift run -c release waymark-bench NAME
// (NAME from the table below, or `all`; accuracy, radio-validate and edge-windows take options, see their files). To add one: write `enum XBenchmark { static func run() }`
// in its own file and add a line to the table.

let benchmarks: [(name: String, run: () -> Void)] = [
    ("decode", DecodeBenchmark.run),
    ("batch-decode", BatchDecodeBenchmark.run),
    ("reports", ReportBenchmark.run),
    ("fusion", FusionBenchmark.run),
    ("fusion-churn", FusionChurnBenchmark.run),
    ("simulate", SimulateBenchmark.run),
    ("aggregator", AggregatorBenchmark.run),
    ("aggregator-core", AggregatorCoreBenchmark.run),
    ("live-latency", LiveLatencyBenchmark.run),
    ("edge", EdgeBenchmark.run),
    ("accuracy", AccuracyBenchmark.run),
    ("radio-validate", AccuracyBenchmark.validate),
    ("edge-windows", EdgeWindowsBenchmark.run),
]

let name = CommandLine.arguments.dropFirst().first
if let run = benchmarks.first(where: { $0.name == name })?.run {
    run()
} else if name == "all" {
    for b in benchmarks {
        print("== \(b.name)")
        b.run()
    }
} else {
    print("usage: waymark-bench NAME  (one of: \(benchmarks.map(\.name).joined(separator: ", ")), all)")
    if let name { print("unknown benchmark '\(name)'") }
}
