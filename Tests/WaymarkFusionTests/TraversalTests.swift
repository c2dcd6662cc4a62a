import Testing
import WaymarkCore
@testable import WaymarkFusion

/// The movement model's traversal lengths are a function of the beacon graph alone. They used to
/// break ties between equally near regions in Dictionary order, which Swift seeds per process, so
/// two runs of `waymark replay` on the same input could record different histories.
@Suite("Traversal lengths: ties broken by region index")
struct TraversalTests {
    @Test("of two equally short paths, the one through the lower-indexed region counts")
    func equalPaths() {
        // 0 –1 m– 1 –1 m– 2 –2 m– 3 and 0 –2 m– 4 –2 m– 3: both 4 m to region 3. Through 2 (settled
        // before 4: same distance, lower index) the traversal is 4 − (1 + 2) / 2 = 2.5 m; through 4
        // it would be 4 − (2 + 2) / 2 = 2 m.
        let graph = BeaconGraph(regionCount: 5, edges: [(0, 1, 1), (1, 2, 1), (2, 3, 2), (0, 4, 2), (4, 3, 2)])
        let t = SetTopology.traversals(from: 0, graph: graph, limit: 5)
        #expect(t[3] == 2.5)
        #expect(t[2] == 1 && t[1] == 0 && t[4] == 0)  // one edge: crossing a boundary takes no time
    }

    @Test("when the limit cuts through equally near regions, the lowest indices are kept")
    func limitCutsTies() {
        // A star: region 0 with eight leaves, all 3 m away; room for the source and three leaves.
        let graph = BeaconGraph(regionCount: 9, edges: (1...8).map { (0, $0, 3.0) })
        let t = SetTopology.traversals(from: 0, graph: graph, limit: 4)
        #expect(Set(t.keys) == [1, 2, 3])
    }
}
