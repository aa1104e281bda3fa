import Wire

/// What media found on a leg with machine detection.
public enum MachineDetectionResult: Sendable, Equatable {
    case human
    case machine
    case beep
    case beepTimeout
}
