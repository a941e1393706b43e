import LanternHTTP
import MediaService

// media: Pairly moments (photos). Configuration: docs/configuration.md.
await ServiceMain.run("media", MediaConfiguration.self) { try await buildMediaApplication($0) }
