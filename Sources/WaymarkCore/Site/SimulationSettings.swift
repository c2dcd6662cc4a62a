/// The radio the simulator gives a venue (`waymark simulate --radio`, site key `simulation.radio`).
/// The physics of each profile lives in WaymarkSimulation (`RadioParameters(profile:)`); see
/// docs/radio-model.md.
public enum RadioProfile: String, CaseIterable, Hashable, Sendable {
    /// The simulator's original model (log-normal shadowing in time, Gaussian fading, 15 % loss):
    /// kinder than real radio; kept so older results stay reproducible.
    case ideal
    /// Fitted to a real recording (Kolakowski calibration run): shadowing correlated in distance
    /// moved and in time, deep fades, receiver offsets, reception falling with distance.
    case indoor
    /// Crowded venue: stronger, faster-changing shadowing and more loss than `indoor`.
    case harsh

    /// The profile `waymark simulate` uses when neither the command line nor the site names one.
    public static let `default`: RadioProfile = .indoor
}

/// The site file's `simulation:` section: how `waymark simulate` treats this venue by default.
public struct SimulationSettings: Hashable, Sendable {
    /// nil: the command line's choice, else `RadioProfile.default`.
    public var radio: RadioProfile?
    /// Whether the regions are separate rooms (walls between them: a gateway anchored elsewhere is
    /// heard through a wall, see `RadioParameters.wallLossDB`) or one open space. Default true.
    public var walls: Bool

    public init(radio: RadioProfile? = nil, walls: Bool = true) {
        self.radio = radio
        self.walls = walls
    }
}
