/// Where a gateway hangs relative to the regions, for the radio model (the tracker's expected
/// readings and the simulator's walls): a region's `gateways` are the ones anchored in it, but a
/// site may also place gateways that anchor no region — one in a corridor, or one the file did not
/// list under the room it hangs in. They still have a position.
extension Site {
    /// Each gateway that anchors no region, with the region nearest to it on its floor (straight-
    /// line distance to the region's centre; ties: the region listed first) and whether it lies
    /// within that region's radius. Gateways on a floor without regions are left out.
    public func unanchoredGatewayRegions() -> [(gateway: Int, region: Int, withinRadius: Bool)] {
        var out: [(gateway: Int, region: Int, withinRadius: Bool)] = []
        for (g, gateway) in gateways.enumerated() where regionsByGateway[g].isEmpty {
            var best: (d: Double, r: Int)? = nil
            for (r, region) in regions.enumerated() where region.floor == gateway.floor {
                let d = gateway.position.distance(to: region.position)
                if best.map({ d < $0.d }) ?? true { best = (d, r) }
            }
            if let best { out.append((g, best.r, best.d <= regions[best.r].radiusM)) }
        }
        return out
    }

    /// For each gateway, the regions whose room it hangs in: the regions anchored at it, or, for a
    /// gateway that anchors none, the nearest region on its floor when it lies within that
    /// region's radius (none otherwise: a corridor gateway behind a wall is not taken as in the
    /// nearest room). Taken as in another room from every region, a gateway that the file left out
    /// of the room it hangs in read several dB hotter there than the model expected: on the real
    /// flat with one of the living room's two anchors unlisted, 84.2 % exact instead of 87.7 %
    /// (docs/accuracy.md, "Gateways that anchor no region").
    public var gatewayHomeRegions: [[Int]] {
        var homes = regionsByGateway
        for (g, r, within) in unanchoredGatewayRegions() where within { homes[g] = [r] }
        return homes
    }
}

extension Site {
    /// The median, over gateways that share their floor with another, of the distance to the
    /// nearest such gateway (in the site's units, metres by contract); nil when no floor has two.
    /// A BLE gateway hears a tag about 10–30 m away indoors, so a median of hundreds is a plan
    /// drawn in centimetres, feet or pixels (`SiteValidator`'s warning).
    public var medianGatewaySpacing: Double? {
        var nearest: [Double] = []
        for (g, gateway) in gateways.enumerated() {
            var best = Double.infinity
            for (h, other) in gateways.enumerated() where h != g && other.floor == gateway.floor {
                best = min(best, gateway.position.distance(to: other.position))
            }
            if best.isFinite { nearest.append(best) }
        }
        guard !nearest.isEmpty else { return nil }
        nearest.sort()
        let n = nearest.count
        return n % 2 == 1 ? nearest[n / 2] : (nearest[n / 2 - 1] + nearest[n / 2]) / 2
    }

    /// Median nearest-gateway spacing above which `waymark site check` asks whether the positions
    /// are in metres (`medianGatewaySpacing`).
    public static let implausibleGatewaySpacingM = 100.0
}
