import AsyncHTTPClient
import Foundation
import Hummingbird
import LanternAppStore
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternHTTP
import LanternLLM
import LanternService
import Logging
import PostgresNIO

/// One app that `content` serves (Lucky Day, AstroSvitla, …): a target of its own under `Services/Content/Sources/`
/// with its Routes, Domain, Store, Events, Catalogue and Migrations, described by one `ContentAppModule` and listed
/// once in `ContentApps.all`. The assembly (`buildContentApplication`) reads each app's configuration, builds it on
/// the shared `ContentPlatform`, mounts its routes, runs its periodic work and calls it when an account is deleted.
public protocol ContentApp: Sendable {
    /// Mounts the app's routes; `requireAuth` admits a valid access token (the app checks that it is its own).
    func addRoutes(to router: Router<LanternRequestContext>, requireAuth: RequireAccessToken)
    /// Its work on a timer (made-ahead texts, reminders, retries).
    var periodicWork: [PeriodicWork] { get }
    /// `user.deleted`: erases everything the app keeps about the user, inside the transaction that records the event
    /// as handled (so the erasure of every app commits once, together).
    func erase(_ user: UUID, at date: Date, on connection: PostgresConnection) async throws
    /// What it consumes besides identity's `user.deleted`, which the assembly handles for every app (`erase`).
    var consumers: [ContentConsumer] { get }
    /// What it forgets on a timer, beside the processed event ids the assembly forgets.
    var housekeeping: [Housekeeping.Rule] { get }
}

extension ContentApp {
    public var consumers: [ContentConsumer] { [] }
    public var housekeeping: [Housekeeping.Rule] { [] }
}

/// An app's handlers for one stream; the assembly runs one consumer (group `content`) per stream for every app.
public struct ContentConsumer: Sendable {
    public var stream: EventStream
    public var handlers: EventHandlers

    public init(stream: EventStream, handlers: EventHandlers) {
        self.stream = stream
        self.handlers = handlers
    }
}

/// What the assembly needs to know of an app before building it.
public struct ContentAppModule: Sendable {
    /// The app's id, in logs and the LLM tasks' names.
    public var app: AppID
    /// The LLM tasks it runs; each may have its own `LLM_MODELS_<TASK>`.
    public var llmTasks: [String]
    /// Its local grammars (task → grammar), what its texts fall back to without a model.
    public var grammars: @Sendable () throws -> [String: Grammar]
    /// Its tables, in the `content` schema; ids unique across the apps (`0001_luckyday`, `0002_astrosvitla`, …).
    public var migrations: @Sendable () throws -> [Migration]
    /// The `# HELP` text of each metric it counts (`MetricHelp.register`).
    public var metricHelp: [String: String]
    /// Reads the app's own configuration keys (a bad value stops start-up, naming the variable) and returns how to
    /// build the app once the platform is there.
    public var configure: @Sendable (Settings) throws -> @Sendable (ContentPlatform) throws -> any ContentApp

    public init(app: AppID, llmTasks: [String], grammars: @escaping @Sendable () throws -> [String: Grammar] = { [:] },
                migrations: @escaping @Sendable () throws -> [Migration], metricHelp: [String: String] = [:],
                configure: @escaping @Sendable (Settings) throws -> @Sendable (ContentPlatform) throws -> any ContentApp) {
        self.app = app
        self.llmTasks = llmTasks
        self.grammars = grammars
        self.migrations = migrations
        self.metricHelp = metricHelp
        self.configure = configure
    }
}

/// What every app of content shares: its database and outbox, the one LLM router (every model and the local
/// grammars of all apps), astrology, the App Store's trust settings, the schedules' interval, the clock and the log.
public struct ContentPlatform: Sendable {
    public let postgres: PostgresClient
    public let outbox: Outbox
    /// Every AI text goes through it.
    public let texts: LLMRouter
    /// The local grammars of every app, for texts written without a model.
    public let local: LocalGenerator
    public let astrology: AstrologyClient
    /// Which App Store signatures are trusted (`APPSTORE_*`); an app verifies its own bundle id with it.
    public let appStore: AppStoreConfiguration
    /// How often the apps' periodic work looks at its tables (`SCHEDULER_INTERVAL_SECONDS`).
    public let schedulerInterval: Duration
    /// Renders per account and minute (report PDFs, share cards): checked after a request's cheap checks, before
    /// its render.
    public let renders: RenderLimit
    public let clock: WallClock
    public let logger: Logger

    public init(postgres: PostgresClient, outbox: Outbox, texts: LLMRouter, local: LocalGenerator, astrology: AstrologyClient,
                appStore: AppStoreConfiguration, schedulerInterval: Duration, renders: RenderLimit = .unlimited, clock: WallClock,
                logger: Logger) {
        self.postgres = postgres
        self.outbox = outbox
        self.texts = texts
        self.local = local
        self.astrology = astrology
        self.appStore = appStore
        self.schedulerInterval = schedulerInterval
        self.renders = renders
        self.clock = clock
        self.logger = logger
    }
}

/// content's schema, which every app's tables live in.
public enum ContentSchema {
    public static let name = "content"
}

/// Files an app ships in its bundle (`Catalogue/…`, `Migrations/`), read with the app's `Bundle.module`.
public enum ContentBundle {
    /// The `Migrations/*.sql` of a bundle.
    public static func migrations(in bundle: Bundle) throws -> [Migration] {
        guard let folder = bundle.url(forResource: "Migrations", withExtension: nil) else {
            throw ConfigurationError(variable: "-", message: "the migrations are missing from the build (\(bundle.bundlePath))")
        }
        return try Migration.load(from: folder)
    }

    /// A JSON file of the bundle's `Catalogue/`, decoded; a file that does not decode stops the start with its name.
    public static func catalogue<T: Decodable>(_ path: String, in bundle: Bundle, as type: T.Type = T.self) throws -> T {
        guard let url = bundle.url(forResource: "Catalogue/" + path, withExtension: nil) else {
            throw ConfigurationError(variable: "-", message: "Catalogue/\(path) is missing from the build")
        }
        do { return try JSONDecoder().decode(T.self, from: Data(contentsOf: url)) } catch {
            throw ConfigurationError(variable: "-", message: "Catalogue/\(path): \(error)")
        }
    }

    /// The JSON files of a folder of the bundle's `Catalogue/`, by name.
    public static func catalogueFiles(_ folder: String, in bundle: Bundle) throws -> [URL] {
        guard let url = bundle.url(forResource: "Catalogue/" + folder, withExtension: nil) else {
            throw ConfigurationError(variable: "-", message: "Catalogue/\(folder) is missing from the build")
        }
        return try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
