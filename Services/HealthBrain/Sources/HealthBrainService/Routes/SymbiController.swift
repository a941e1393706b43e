import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP

/// `/v1/symbi`: health data in, the pet's state out, settings, calm sessions, history, the gallery and the export.
/// Symbi's user tokens only (403 `symbi_only` for another app's).
struct SymbiController: Sendable {
    let care: SymbiCare
    let catalogue: StateCatalogue

    /// Mounted at `/v1/symbi`.
    var routes: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.post("metrics", use: upload)
        routes.get("state", use: state)
        routes.get("settings", use: settings)
        routes.put("settings", use: updateSettings)
        routes.post("sessions", use: calm)
        routes.get("history", use: history)
        routes.get("evolutions", use: evolutions)
        routes.get("evolutions/:evolutionId/image", use: picture)
        routes.get("export", use: export)
        return routes
    }

    // MARK: Bodies

    struct UploadRequest: Decodable {
        /// The IANA zone the days are local to (a local date means nothing without it); becomes the pet's zone.
        var timeZone: String?
        var days: [Day]?

        struct Day: Decodable {
            var date: String?
            var source: String?
            var recordedAt: Date?
            var steps: Int?
            var sleepHours: Double?
            var hrvMs: Double?
            var goals: Goals?
        }
    }

    struct Goals: Codable {
        var steps: Int?
        var sleepHours: Double?
    }

    struct ThresholdsBody: Codable {
        var sadToResting: Int?
        var restingToActive: Int?
    }

    struct SettingsRequest: Decodable {
        var mode: String?
        var timeZone: String?
        var thresholds: ThresholdsBody?
        var goals: Goals?
    }

    struct SettingsBody: Encodable {
        var mode: String
        var timeZone: String
        var thresholds: Thresholds
        var goals: Goals
        /// When the day's brain looks at today next.
        var nextBrainAt: Date?

        init(_ pet: PetRecord) {
            mode = pet.settings.mode.rawValue
            timeZone = pet.settings.timeZone
            thresholds = pet.settings.thresholds
            goals = Goals(steps: pet.settings.stepsGoal, sleepHours: pet.settings.sleepGoalHours)
            nextBrainAt = pet.brainDueAt
        }
    }

    struct StateBody: Encodable {
        var state: String
        var name: String
        var caption: String
        var source: String
        var localDate: String?
        var since: Date
        var version: Int
        /// "Calm your Symbi" is offered (Req 7.1).
        var canCalm: Bool
        var activeDays: Int
        var daysToNextEvolution: Int
        var stage: Int
        var form: Form?
        var mindfulMinutes: Int

        struct Form: Encodable {
            var evolutionId: String
        }
    }

    struct SessionRequest: Decodable {
        var minutes: Int?
        var completedAt: Date?
    }

    struct DayBody: Encodable {
        var date: String
        var state: String
        var source: String
        var steps: String
        var sleep: String
        var hrv: String
        var lively: Bool

        init(_ day: DayRecord) {
            date = day.date.description
            state = day.state.rawValue
            source = day.source.rawValue
            steps = day.descriptors.steps.rawValue
            sleep = day.descriptors.sleep.rawValue
            hrv = day.descriptors.hrv.rawValue
            lively = day.activeCounted
        }
    }

    struct HistoryBody: Encodable {
        var days: [DayBody]
    }

    struct EvolutionBody: Encodable {
        var evolutionId: String
        var stage: Int
        var status: String
        var triggeredAt: Date
        var activeDays: Int
        var state: String
        var current: Bool
        var image: Image?

        struct Image: Encodable {
            /// Where the app downloads it (`GET /v1/symbi/evolutions/{evolutionId}/image`).
            var url: String
            var contentType: String?
            var width: Int?
            var height: Int?
            var generator: String?
            var createdAt: Date?
        }

        init(_ evolution: EvolutionRecord, current: UUID?) {
            evolutionId = evolution.id.lowercased
            stage = evolution.stage
            status = evolution.imageKey == nil ? "drawing" : "ready"
            triggeredAt = evolution.triggeredAt
            activeDays = evolution.activeDays
            state = evolution.state.rawValue
            self.current = evolution.id == current
            image = evolution.imageKey.map { _ in
                Image(url: "/v1/symbi/evolutions/\(evolution.id.lowercased)/image", contentType: evolution.contentType, width: evolution.width, height: evolution.height, generator: evolution.generator,
                      createdAt: evolution.evolvedAt)
            }
        }
    }

    struct GalleryBody: Encodable {
        var evolutions: [EvolutionBody]
    }

    struct ExportBody: Encodable {
        var exportedAt: Date
        var settings: SettingsBody
        var state: StateBody
        var hrvBaseline: HRVBaseline
        /// Raw values still held: each goes 24 hours after it was processed (`deletedBy`).
        var metrics: [MetricsBody]
        var days: [DayBody]
        var sessions: [SessionBody]
        var evolutions: [EvolutionBody]
    }

    struct MetricsBody: Encodable {
        var date: String
        var source: String
        var recordedAt: Date
        var steps: Int?
        var sleepHours: Double?
        var hrvMs: Double?
        var goals: Goals
        var processedAt: Date
        var deletedBy: Date
    }

    struct SessionBody: Encodable {
        var minutes: Int
        var completedAt: Date
    }

    // MARK: Handlers

    @Sendable func upload(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let user = try caller(context)
        let body = try await request.decodeJSON(as: UploadRequest.self, context: context)
        let now = care.clock.now()
        var v = FieldValidator()
        let zone = body.timeZone.flatMap(TimeZoneName.zone) ?? .gmt
        if let name = body.timeZone { v.check(TimeZoneName.isValid(name), "timeZone", "must be an IANA time zone such as Europe/Kyiv") }
        else { v.fail("timeZone", "is required: the IANA time zone the days are local to, such as Europe/Kyiv") }
        let today = LocalDay(now, in: zone)
        let days = body.days ?? []
        if days.isEmpty { v.fail("days", "must list 1 to \(HealthLimits.batchDays) days") }
        if days.count > HealthLimits.batchDays { v.fail("days", "must list at most \(HealthLimits.batchDays) days; send older ones in another batch") }
        var metrics: [DailyMetrics] = []
        var seen: Set<String> = []
        for (index, day) in days.prefix(HealthLimits.batchDays).enumerated() {
            let field = "days[\(index)]"
            let date = day.date.flatMap(LocalDay.init)
            if day.date == nil { v.fail("\(field).date", "is required: the local day (YYYY-MM-DD) the values are about") }
            else if let date {
                v.check(date <= today, "\(field).date", "is after today (\(today)) in \(zone.identifier)")
                v.check(date >= today.adding(days: -HealthLimits.daysBack), "\(field).date",
                        "is more than \(HealthLimits.daysBack) days ago: the pet keeps 30 days of history")
            } else { v.fail("\(field).date", "must be a date as YYYY-MM-DD") }
            let source = day.source.flatMap(HealthSource.init(rawValue:))
            v.check(source != nil, "\(field).source", "must be one of \(HealthSource.allCases.map(\.rawValue).joined(separator: ", "))")
            if let recordedAt = day.recordedAt {
                v.check(recordedAt <= now.addingTimeInterval(300), "\(field).recordedAt", "is more than 5 minutes ahead of the server's clock")
            }
            if day.steps == nil, day.sleepHours == nil, day.hrvMs == nil {
                v.fail(field, "must carry at least one of steps, sleepHours, hrvMs")
            }
            if let steps = day.steps {
                v.check(HealthLimits.steps.contains(steps), "\(field).steps", "must be from 0 to 100000")
            }
            if let hours = day.sleepHours {
                v.check(HealthLimits.sleepHours.contains(hours), "\(field).sleepHours", "must be from 0 to 24 hours")
            }
            if let hrv = day.hrvMs {
                v.check(HealthLimits.hrvMilliseconds.contains(hrv), "\(field).hrvMs", "must be from 1 to 300 milliseconds")
            }
            if let goal = day.goals?.steps {
                v.check(HealthLimits.stepsGoal.contains(goal), "\(field).goals.steps", "must be from 100 to 100000")
            }
            if let goal = day.goals?.sleepHours {
                v.check(HealthLimits.sleepGoalHours.contains(goal), "\(field).goals.sleepHours", "must be from 1 to 16 hours")
            }
            if let date, let source {
                v.check(seen.insert("\(date) \(source)").inserted, "\(field)", "repeats the date and source of an earlier day in the batch")
                metrics.append(DailyMetrics(date: date, source: source, recordedAt: day.recordedAt ?? now, steps: day.steps,
                                            sleepHours: day.sleepHours, hrvMilliseconds: day.hrvMs, stepsGoal: day.goals?.steps,
                                            sleepGoalHours: day.goals?.sleepHours))
            }
        }
        try v.validate()
        let updated = try await care.upload(metrics, zone: body.timeZone ?? zone.identifier, for: user)
        return try ConditionalResponse.json(stateBody(updated), for: request, cacheControl: "private, no-cache")
    }

    @Sendable func state(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let user = try caller(context)
        return try ConditionalResponse.json(stateBody(try await care.pet(of: user)), for: request, cacheControl: "private, no-cache")
    }

    @Sendable func settings(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<SettingsBody> {
        JSONResponse(SettingsBody(try await care.pet(of: try caller(context))))
    }

    @Sendable func updateSettings(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<SettingsBody> {
        let user = try caller(context)
        let body = try await request.decodeJSON(as: SettingsRequest.self, context: context)
        let current = try await care.pet(of: user).settings
        var v = FieldValidator()
        var settings = current
        if let mode = body.mode {
            if let mode = EntryMode(rawValue: mode) { settings.mode = mode }
            else { v.fail("mode", "must be one of \(EntryMode.allCases.map(\.rawValue).joined(separator: ", "))") }
        }
        if let zone = body.timeZone {
            if TimeZoneName.isValid(zone) { settings.timeZone = zone } else { v.fail("timeZone", "must be an IANA time zone such as Europe/Kyiv") }
        }
        if let thresholds = body.thresholds {
            settings.thresholds.sadToResting = thresholds.sadToResting ?? settings.thresholds.sadToResting
            settings.thresholds.restingToActive = thresholds.restingToActive ?? settings.thresholds.restingToActive
            for problem in settings.thresholds.problems { v.fail(problem.field, problem.message) }
        }
        if let goal = body.goals?.steps {
            if HealthLimits.stepsGoal.contains(goal) { settings.stepsGoal = goal } else { v.fail("goals.steps", "must be from 100 to 100000") }
        }
        if let goal = body.goals?.sleepHours {
            if HealthLimits.sleepGoalHours.contains(goal) { settings.sleepGoalHours = goal } else { v.fail("goals.sleepHours", "must be from 1 to 16 hours") }
        }
        try v.validate()
        let chosen = settings
        let pet = try await care.updateSettings(of: user) { $0 = chosen }
        return JSONResponse(SettingsBody(pet))
    }

    @Sendable func calm(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let user = try caller(context)
        guard let key = try IdempotencyKey.of(request) else {
            throw Problem.invalid(field: "Idempotency-Key", "is required: a new key (a UUID) for each session, the same one when retrying it")
        }
        let body = try await request.decodeJSON(as: SessionRequest.self, context: context)
        var v = FieldValidator()
        if let minutes = body.minutes { v.check((1...5).contains(minutes), "minutes", "must be from 1 to 5: a breathing session lasts 1 to 5 minutes") }
        else { v.fail("minutes", "is required: the session's length in whole minutes, 1 to 5") }
        if let completedAt = body.completedAt {
            v.check(completedAt <= care.clock.now().addingTimeInterval(300), "completedAt", "is more than 5 minutes ahead of the server's clock")
        }
        try v.validate()
        switch try await care.calm(user, key: key, minutes: body.minutes ?? 1, completedAt: body.completedAt) {
        case .calmed(let pet):
            return try ConditionalResponse.written(stateBody(pet), status: .created)
        case .replayed(let pet):
            return try ConditionalResponse.written(stateBody(pet), status: .ok)
        case .notCalm(let state):
            throw Problem(status: 409, code: "symbi_not_upset", title: "Conflict",
                          detail: "Symbi is \(state.rawValue): a calm session is offered only when it is stressed or anxious.",
                          extensions: ["state": .string(state.rawValue)])
        }
    }

    @Sendable func history(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<HistoryBody> {
        JSONResponse(HistoryBody(days: try await care.records.history(try caller(context)).map(DayBody.init)))
    }

    @Sendable func evolutions(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<GalleryBody> {
        let user = try caller(context)
        let pet = try await care.records.pet(user)
        return JSONResponse(GalleryBody(evolutions: try await care.records.evolutions(user).map { EvolutionBody($0, current: pet?.form) }))
    }

    /// An evolution's picture (Req 8.3–8.5). A drawn picture never changes: the app keeps it for a year and
    /// revalidates with its ETag; 404 while it is being drawn (`status: drawing` in the gallery) or for another
    /// user's evolution.
    @Sendable func picture(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let user = try caller(context)
        guard let text = context.parameters.get("evolutionId"), let evolution = UUID(uuidString: text) else {
            throw Problem.invalid(field: "evolutionId", "must be an evolution's id (a UUID)")
        }
        guard let picture = try await care.picture(of: user, evolution: evolution) else {
            throw Problem.notFound("No picture of this evolution: it is not yours, or it is still being drawn.", code: "evolution_image_not_found")
        }
        let etag = "\"\(evolution.lowercased)\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, max-age=31536000, immutable",
                                   .contentDisposition: "inline; filename=\"symbi-stage-\(picture.evolution.stage).png\""]
        if ConditionalResponse.matches(request.headers[.ifNoneMatch], etag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = picture.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: picture.bytes)))
    }

    /// Everything health-brain holds about the user, as one JSON file (Req 11.5).
    @Sendable func export(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<ExportBody> {
        let user = try caller(context)
        let now = care.clock.now()
        let data = try await care.records.export(user)
        let pet = data?.pet ?? PetRecord.new(user, at: now)
        let retention = care.rawRetention
        return JSONResponse(ExportBody(
            exportedAt: now, settings: SettingsBody(pet), state: stateBody(pet), hrvBaseline: pet.hrv,
            metrics: (data?.metrics ?? []).map { stored in
                let m = stored.metrics
                return MetricsBody(date: m.date.description, source: m.source.rawValue, recordedAt: m.recordedAt, steps: m.steps, sleepHours: m.sleepHours,
                                   hrvMs: m.hrvMilliseconds, goals: Goals(steps: m.stepsGoal, sleepHours: m.sleepGoalHours),
                                   processedAt: stored.processedAt, deletedBy: stored.processedAt.addingTimeInterval(retention))
            },
            days: (data?.days ?? []).map(DayBody.init),
            sessions: (data?.sessions ?? []).map { SessionBody(minutes: $0.minutes, completedAt: $0.completedAt) },
            evolutions: (data?.evolutions ?? []).map { EvolutionBody($0, current: pet.form) }),
            headers: [.contentDisposition: "attachment; filename=\"symbi-export.json\""])
    }

    // MARK: Helpers

    func stateBody(_ pet: PetRecord) -> StateBody {
        let entry = catalogue.entry(pet.state)
        return StateBody(state: pet.state.rawValue, name: entry.name, caption: entry.caption, source: pet.source.rawValue,
                         localDate: pet.stateDay?.description, since: pet.since, version: pet.version, canCalm: pet.state.canBeCalmed,
                         activeDays: pet.activeDays, daysToNextEvolution: PetCare.daysToNextEvolution(pet, now: care.clock.now()),
                         stage: pet.stage, form: pet.form.map { StateBody.Form(evolutionId: $0.lowercased) }, mindfulMinutes: pet.mindfulMinutes)
    }

    /// The Symbi user of the token: 403 for another app's, 403 for a service token.
    private func caller(_ context: LanternRequestContext) throws -> UUID {
        let claims = try context.requireAuth()
        guard claims.app == AppID.symbi.rawValue else {
            throw Problem.forbidden("These routes are Symbi's; sign in to Symbi.", code: "symbi_only")
        }
        guard let user = claims.userID else { throw Problem.forbidden("This route is for user tokens.") }
        return user
    }
}
