/// The apps Lantern serves; every account belongs to exactly one.
public enum AppID: String, Codable, Sendable, CaseIterable {
    case luckyday, pairly, astrosvitla, roastmelater, symbi
}
