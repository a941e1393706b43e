import LanternHTTP
import MediaService

// media: Pairly moments (photos). Configuration: docs/configuration.md.
await ServiceMain.run("media") { try await buildMediaApplication(MediaConfiguration(settings: $0)) }
