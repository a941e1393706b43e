import ContentService
import LanternHTTP

// content: every AI text (Lucky Day today). Configuration: docs/configuration.md.
await ServiceMain.run("content", ContentConfiguration.self) { try await buildContentApplication($0) }
