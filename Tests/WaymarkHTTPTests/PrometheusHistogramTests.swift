import Testing
import WaymarkHTTP

@Suite struct PrometheusHistogramTests {
    let text = """
        # HELP waymark_x_seconds Something.
        # TYPE waymark_x_seconds histogram
        waymark_x_seconds_bucket{le="1.0"} 20
        waymark_x_seconds_bucket{le="2.0"} 90
        waymark_x_seconds_bucket{le="+Inf"} 100
        waymark_x_seconds_bucket{le="3.0"} 96
        waymark_x_seconds_sum 150.5
        waymark_x_seconds_count 100
        waymark_x_seconds_other_bucket{le="1.0"} 7
        waymark_y_total 3
        """

    @Test func readsBucketsCountAndSumOfOneHistogram() throws {
        let h = try #require(PrometheusHistogram(text, name: "waymark_x_seconds"))
        #expect(h.buckets.map(\.le) == [1, 2, 3, .infinity])
        #expect(h.buckets.map(\.count) == [20, 90, 96, 100])
        #expect(h.count == 100 && h.sum == 150.5 && h.mean == 1.505)
        #expect(h.cumulative(atMost: 2.5) == 90 && h.cumulative(atMost: 3) == 96 && h.cumulative(atMost: 0.5) == 0)
        #expect(PrometheusHistogram(text, name: "waymark_y") == nil)
    }

    @Test func quantilesInterpolateWithinTheirBucket() throws {
        let h = try #require(PrometheusHistogram(text, name: "waymark_x_seconds"))
        #expect(h.quantile(0.1) == 0.5)  // 10 of the first 20, in 0…1
        #expect(abs(h.quantile(0.5)! - (1 + 30.0 / 70)) < 1e-12)  // rank 50: 30 of the 70 in 1…2
        #expect(abs(h.quantile(0.95)! - (2 + 5.0 / 6)) < 1e-12)
        #expect(h.quantile(0.99) == .infinity && h.largestFiniteBound == 3)
        let labelled = try #require(PrometheusHistogram(#"a_bucket{shard="0",le="5"} 4"# + "\n" + #"a_bucket{shard="0",le="+Inf"} 4"# + "\na_count 4",
                                                        name: "a"))
        #expect(labelled.quantile(0.5) == 2.5)
    }
}
