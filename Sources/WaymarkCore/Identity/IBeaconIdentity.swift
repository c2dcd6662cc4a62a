/// An iBeacon identity with Core Location's hierarchical matching: UUID alone, UUID + major, or
/// UUID + major + minor. Used for region identities (what a phone app monitors) and allow-lists.
public struct IBeaconIdentity: Hashable, Sendable, CustomStringConvertible {
    public var uuid: BeaconUUID
    public var major: UInt16?
    public var minor: UInt16?

    /// A minor without a major is not a valid constraint (Core Location forbids it too).
    public init?(uuid: BeaconUUID, major: UInt16? = nil, minor: UInt16? = nil) {
        if minor != nil && major == nil { return nil }
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// True when a beacon advertising (uuid, major, minor) falls under this identity.
    public func matches(uuid: BeaconUUID, major: UInt16, minor: UInt16) -> Bool {
        guard uuid == self.uuid else { return false }
        if let m = self.major, m != major { return false }
        if let n = self.minor, n != minor { return false }
        return true
    }

    public var description: String {
        var s = uuid.description
        if let major { s += ":\(major)" }
        if let minor { s += ":\(minor)" }
        return s
    }
}
