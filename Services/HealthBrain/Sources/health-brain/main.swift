import HealthBrainService
import LanternHTTP

// health-brain: Symbi's pets — health data kept at most a day, the day's brain, calm sessions, evolutions.
// Configuration: docs/configuration.md.
await ServiceMain.run("health-brain", HealthBrainConfiguration.self) { try await buildHealthBrainApplication($0) }
