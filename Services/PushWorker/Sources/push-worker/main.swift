import LanternHTTP
import PushWorker

// push-worker: APNs / FCM delivery of `lantern.jobs.push`. Configuration: docs/configuration.md.
await ServiceMain.run("push-worker", PushWorkerConfiguration.self) { try await buildPushWorkerApplication($0) }
