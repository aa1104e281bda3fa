/// The kinds of player, as the REST paths name them (`…/say`, `…/play`, `…/tone`).
public enum PlayerKind: String, Sendable, Hashable, Codable, CaseIterable {
    case say, play, tone
}
