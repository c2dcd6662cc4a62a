extension EdgeConfig {
    /// The longest `window_s` that costs no room-level accuracy worth naming: the aggregator's
    /// tracker works in steps of one second, and a window's readings reach it as one reading at
    /// the window's last advert.
    public static let accurateWindowS = 2.0

    /// Settings that are valid but cost the venue something it may not intend, one sentence each
    /// with what to do instead; the agent logs them at warning level when it starts.
    public var advice: [String] {
        var out: [String] = []
        if windowS > Self.accurateWindowS {
            out.append("window_s is \(windowS) s: the aggregator tracks each device in 1-s steps, and longer windows "
                       + "cost room-level accuracy (on the real Kolakowski recordings 3 s lost 1.5–5.5 points of exact room time, 5 s 12–22; "
                       + "docs/edge.md); keep 1 s unless the link cannot carry it")
        }
        return out
    }
}
