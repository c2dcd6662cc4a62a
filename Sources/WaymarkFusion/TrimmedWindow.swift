/// The last 8 readings of one (device, gateway) pair, packed into 34 bytes: RSSI in 0.5 dB steps
/// (one byte each) and times in 10 ms from an epoch (two bytes each). The trimmed mean drops the
/// highest and the lowest reading of the window when it holds 4 or more, which rejects single
/// outliers without a model.
struct TrimmedWindow: Sendable, Hashable, Codable {
    /// Byte i: −RSSI × 2 of reading i.
    private var rssi: UInt64 = 0
    /// 16-bit lane i: 10 ms ticks since `epoch` of reading i (lanes 0–3 in `ticksLow`).
    private var ticksLow: UInt64 = 0
    private var ticksHigh: UInt64 = 0
    private var epoch: Double = 0
    private var count: UInt8 = 0
    private var next: UInt8 = 0

    /// Whether it holds no reading.
    var isEmpty: Bool { count == 0 }

    private func value(_ i: Int) -> Float { -Float((rssi >> (8 * i)) & 0xFF) / 2 }

    private func tick(_ i: Int) -> UInt16 {
        UInt16(truncatingIfNeeded: (i < 4 ? ticksLow : ticksHigh) >> (16 * (i % 4)))
    }

    private mutating func setTick(_ i: Int, _ v: UInt16) {
        let shift = UInt64(16 * (i % 4))
        let cleared = ~(UInt64(0xFFFF) << shift)
        if i < 4 { ticksLow = ticksLow & cleared | UInt64(v) << shift } else { ticksHigh = ticksHigh & cleared | UInt64(v) << shift }
    }

    mutating func add(_ value: Float, at t: Double, window: Double) {
        if count == 0 { epoch = t }
        if (t - epoch) * 100 > 60_000 {
            // Rebase so that offsets fit; readings older than the window no longer matter.
            let newEpoch = t - window
            for i in 0..<8 { setTick(i, UInt16(max(0, (epoch + Double(tick(i)) / 100 - newEpoch) * 100))) }
            epoch = newEpoch
        }
        let i = Int(next)
        let byte = UInt64(max(0, min(255, (-value * 2).rounded())))
        rssi = rssi & ~(UInt64(0xFF) << UInt64(8 * i)) | byte << UInt64(8 * i)
        setTick(i, UInt16(max(0, (t - epoch) * 100)))
        next = (next + 1) % 8
        count = min(8, count + 1)
    }

    func mean(at t: Double, window: Double) -> Float? {
        var sum: Float = 0, lo = Float.infinity, hi = -Float.infinity, n: Float = 0
        for k in 0..<Int(count) {
            let i = (Int(next) + 7 - k) % 8
            guard epoch + Double(tick(i)) / 100 >= t - window else { continue }
            let v = value(i)
            sum += v; lo = min(lo, v); hi = max(hi, v); n += 1
        }
        guard n > 0 else { return nil }
        return n >= 4 ? (sum - lo - hi) / (n - 2) : sum / n
    }
}
