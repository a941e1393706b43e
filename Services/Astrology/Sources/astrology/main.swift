import AstrologyService
import LanternHTTP

// astrology: natal charts (Swiss Ephemeris, AGPL-3.0 — see Services/Astrology/LICENSE). Configuration: docs/configuration.md.
await ServiceMain.run("astrology", AstrologyConfiguration.self) { try await buildAstrologyApplication($0) }
