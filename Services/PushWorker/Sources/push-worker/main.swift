import LanternHTTP
import PushWorker

// push-worker: APNs / FCM delivery of `lantern.jobs.push`. Configuration: docs/configuration.md.
await ServiceMain.run("push-worker") { try await buildPushWorkerApplication(PushWorkerConfiguration(settings: $0)) }
