extension Duration {
    /// The duration in seconds, for printing rates.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
