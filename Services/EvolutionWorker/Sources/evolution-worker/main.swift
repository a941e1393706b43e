import EvolutionWorker
import LanternHTTP

// evolution-worker: draws Symbi's evolutions (the image model, or Lantern's own procedural ghost) from
// lantern.jobs.evolution. Configuration: docs/configuration.md.
await ServiceMain.run("evolution-worker", EvolutionWorkerConfiguration.self) { try await buildEvolutionWorkerApplication($0) }
