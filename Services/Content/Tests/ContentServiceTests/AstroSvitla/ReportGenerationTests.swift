import Foundation
import HTTPTypes
import HummingbirdTesting
import LanternCore
import LanternTestSupport
import Testing

/// A model's JSON answer with the given shape.
private func answer(sentence: String, repeats: Int, key: String, tips: Int = 3) -> String {
    let analysis = Array(repeating: sentence, count: repeats).joined(separator: " ")
    let object: [String: Any] = ["keyInfluences": key, "detailedAnalysis": analysis,
                                 "recommendations": (1...tips).map { "\(sentence) (\($0))" }]
    return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
}

private let english = answer(sentence: "Your chart shows steady growth in this area and your work rewards patience.", repeats: 33,
                             key: "The Sun in Taurus steadies you. The Moon in Capricorn adds resolve.")
private let ukrainian = answer(sentence: "Ваша карта показує стабільне зростання в цій сфері, і праця винагороджує терпіння.", repeats: 40,
                               key: "Сонце в Тельці дає вам стійкість. Місяць у Козерозі додає рішучості.")

@Suite("AstroSvitla report generation: model in shape, one corrected retry, then the local composition")
struct ReportGenerationTests {
    static let model = ["LLM_MODELS_REPORT": "gemini:gemini-2.5-flash", "LLM_MODELS": "gemini:gemini-2.5-flash"]

    private func source(_ h: ContentHarness, _ id: String) async throws -> String? {
        try await h.scalar("SELECT source FROM content.reports WHERE id = '\(id)'", as: String.self)
    }

    @Test("a model's answer in shape is the report; the prompt lists the chart's placements and the rules' texts, never birth data")
    func modelInShape() async throws {
        let store = try TestAppStore()
        try await ReportsHarness.run(store, llm: Self.model) { h in
            h.llm.script("gemini-2.5-flash", .ok(english))
            h.llm.forbid("1990", "14:35", "703448", "Kyiv")
            let user = UUID()
            let report = try await h.buy(user, jws: try h.transaction(store, for: user)).decode(ReportBody.self)
            #expect(report.status == "ready" && report.sections?.keyInfluences.hasPrefix("The Sun in Taurus") == true)
            #expect(try await source(h, report.id) == "gemini:gemini-2.5-flash")
            let prompt = try #require(h.llm.received(model: "gemini-2.5-flash").first)
            #expect(prompt.prompt.contains("Sun in Taurus") && prompt.prompt.contains("Career and Professional Growth"))
            #expect(prompt.prompt.contains("With the Sun in Taurus") || prompt.prompt.contains("Sun in Taurus"))
            let config = prompt.json?["generationConfig"] as? [String: Any]
            #expect(config?["responseJsonSchema"] != nil)
        }
    }

    @Test("an over-long answer is retried once with what was wrong; a second one out of shape gives the local composition")
    func overLong() async throws {
        let store = try TestAppStore()
        let long = answer(sentence: "Your chart shows steady growth in this area and your work rewards patience.", repeats: 60, key: "One. Two.")
        try await ReportsHarness.run(store, llm: Self.model) { h in
            h.llm.script("gemini-2.5-flash", .ok(long), .ok(english))
            let user = UUID()
            let first = try await h.buy(user, jws: try h.transaction(store, for: user)).decode(ReportBody.self)
            #expect(try await source(h, first.id) == "gemini:gemini-2.5-flash")
            let prompts = h.llm.received(model: "gemini-2.5-flash")
            #expect(prompts.count == 2 && prompts[1].prompt.contains("refused") && prompts[1].prompt.contains("detailedAnalysis has"))

            h.llm.script("gemini-2.5-flash", .ok(long))
            let second = try await h.buy(user, jws: try h.transaction(store, for: user, area: "health"), area: "health").decode(ReportBody.self)
            let secondSource = try await source(h, second.id)
            #expect(second.status == "ready" && secondSource == "local")
            let words = second.sections?.detailedAnalysis.split(whereSeparator: \.isWhitespace).count ?? 0
            #expect((400...500).contains(words))
        }
    }

    @Test("Ukrainian: an English answer is refused, the retry's Ukrainian is kept; end to end the report is in Ukrainian")
    func ukrainianReport() async throws {
        let store = try TestAppStore()
        try await ReportsHarness.run(store, llm: Self.model) { h in
            h.llm.script("gemini-2.5-flash", .ok(english), .ok(ukrainian))
            let user = UUID()
            var headers: HTTPFields = [:]
            headers[.acceptLanguage] = "uk-UA"
            let report = try await h.buy(user, jws: try h.transaction(store, for: user), headers: headers).decode(ReportBody.self)
            #expect(report.language == "uk" && report.title == "Кар'єра та професійне зростання")
            #expect(report.sections?.keyInfluences.hasPrefix("Сонце в Тельці") == true)
            let prompts = h.llm.received(model: "gemini-2.5-flash")
            #expect(prompts.count == 2 && prompts[0].prompt.contains("in Ukrainian") && prompts[1].prompt.contains("language"))

            // Wrong language twice: the local composition, in Ukrainian.
            h.llm.script("gemini-2.5-flash", .ok(english))
            let local = try await h.buy(user, jws: try h.transaction(store, for: user, area: "finances"), area: "finances", language: "uk")
                .decode(ReportBody.self)
            #expect(try await source(h, local.id) == "local")
            let text = [local.sections?.keyInfluences ?? "", local.sections?.detailedAnalysis ?? ""].joined()
            let letters = text.unicodeScalars.filter { CharacterSet.letters.contains($0) }
            #expect(Double(letters.filter { (0x0400...0x04FF).contains($0.value) }.count) / Double(max(1, letters.count)) > 0.95)
            let plain = try await h.request(.get, "/v1/reports/\(local.id)/text", as: user, app: .astrosvitla)
            #expect(String(buffer: plain.body).contains("Практичні рекомендації"))
        }
    }

    @Test("a model that does not answer within the report budget: the local composition, the same request")
    func slowModel() async throws {
        let store = try TestAppStore()
        try await ReportsHarness.run(store, llm: Self.model, extra: ["REPORT_BUDGET_SECONDS": "1"]) { h in
            h.llm.script("gemini-2.5-flash", .hang)
            let user = UUID()
            let response = try await h.buy(user, jws: try h.transaction(store, for: user))
            #expect(response.status == .created)
            let report = try response.decode(ReportBody.self)
            let reportSource = try await source(h, report.id)
            #expect(report.status == "ready" && reportSource == "local")
        }
    }

    @Test("failing models (5xx, safety blocks): the local composition; unknown birth time is said and houses are left out")
    func failingModel() async throws {
        let store = try TestAppStore()
        try await ReportsHarness.run(store, llm: Self.model) { h in
            h.llm.script("gemini-2.5-flash", .serverError(503), .safety)
            let user = UUID()
            let response = try await h.buy(user, jws: try h.transaction(store, for: user, area: "relationships"), area: "relationships",
                                           birth: #"{"date":"1990-05-17","time":null,"place":{"id":703448}}"#)
            let report = try response.decode(ReportBody.self)
            #expect(report.status == "ready" && !report.birthTimeKnown && report.notes.count == 1)
            #expect(report.sections?.detailedAnalysis.contains("birth time is unknown") == true)
            let analysis = report.sections?.detailedAnalysis ?? ""
            #expect(analysis.range(of: #"\d(st|nd|rd|th) house|Ascendant in"#, options: .regularExpression) == nil)
            #expect(try await source(h, report.id) == "local")
        }
    }
}

/// `ContentHarness` with `store` as the App Store.
enum ReportsHarness {
    static func run(_ store: TestAppStore, llm: [String: String] = [:], extra: [String: String] = [:],
                    _ body: @Sendable (ContentHarness) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("appstore-root-\(UUID().uuidString).pem")
        try store.rootPEM.write(to: root, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: root) }
        // Trusting the test App Store's root instead of Apple's is a development setting (AppStoreConfiguration).
        var variables = ["APPSTORE_ROOT_CERTIFICATES": root.path, "ASTROSVITLA_BUNDLE_ID": "app.lantern.astrosvitla", "REPORT_BUDGET_SECONDS": "30",
                         "LANTERN_ENVIRONMENT": "development"]
        variables.merge(extra) { $1 }
        try await ContentHarness.run(llm: llm, extra: variables, body)
    }
}
