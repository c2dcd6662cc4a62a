public import WaymarkCore

/// Where one device is over time: a piecewise-linear path through timed waypoints. Between two
/// waypoints the device moves along the straight segment at constant speed; a change of floor
/// happens halfway (stairs, a lift).
public struct Trajectory: Hashable, Sendable {
    public struct Waypoint: Hashable, Sendable {
        public var time: Double
        public var position: Point
        public var floor: Int
        public init(time: Double, position: Point, floor: Int) {
            self.time = time
            self.position = position
            self.floor = floor
        }
    }

    /// In time order; the device is in the venue from the first waypoint's time to the last one's.
    public private(set) var waypoints: [Waypoint]

    public init(waypoints: [Waypoint]) {
        precondition(!waypoints.isEmpty, "a trajectory needs at least one waypoint")
        self.waypoints = waypoints
    }

    public var arrival: Double { waypoints[0].time }
    public var departure: Double { waypoints[waypoints.count - 1].time }

    mutating func append(_ w: Waypoint) {
        precondition(w.time >= departure, "waypoints must be in time order")
        waypoints.append(w)
    }

    /// Position and floor at `time` (clamped to the trajectory's span).
    public func location(at time: Double) -> (position: Point, floor: Int) {
        var cursor = 0
        return location(at: time, cursor: &cursor)
    }

    /// As `location(at:)`, for non-decreasing times: `cursor` remembers the segment so a sweep
    /// through the trajectory costs O(1) per call.
    @inline(__always)
    public func location(at time: Double, cursor: inout Int) -> (position: Point, floor: Int) {
        let last = waypoints.count - 1
        if cursor > last { cursor = last }
        while cursor < last && waypoints[cursor + 1].time <= time { cursor += 1 }
        while cursor > 0 && waypoints[cursor].time > time { cursor -= 1 }
        let a = waypoints[cursor]
        guard cursor < last, time > a.time else { return (a.position, a.floor) }
        let b = waypoints[cursor + 1]
        let span = b.time - a.time
        let f = span > 0 ? (time - a.time) / span : 1
        let p = Point(x: a.position.x + (b.position.x - a.position.x) * f,
                      y: a.position.y + (b.position.y - a.position.y) * f)
        return (p, f < 0.5 ? a.floor : b.floor)
    }
}
