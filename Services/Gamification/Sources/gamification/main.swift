import GamificationService
import LanternHTTP

// gamification: streaks, badges and rewards of every app with a catalogue. Configuration: docs/configuration.md.
await ServiceMain.run("gamification", GamificationConfiguration.self) { try await buildGamificationApplication($0) }
