import AsyncHTTPClient
import Foundation
import LanternContracts
import LanternCore
import LanternTokens
import NIOCore
import NIOFoundationCompat

/// astrology's internal routes with content's service token: Ba Zi for Lucky Day, natal charts (JSON and SVG)
/// for AstroSvitla. The birth data passes through to astrology, which validates it; its 422 comes back with each
/// field under `birth.`.
struct AstrologyClient: BaziSource, ChartSource {
    let baseURL: URL
    let tokens: ServiceTokenSource?
    let http: HTTPClient

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    func bazi(_ birth: BirthData) async throws -> BaziReading {
        struct Body: Encodable {
            var date: String
            var time: String
            var place: BirthData.Place
            var dayBoundary = "23:00"
        }
        // Unknown time: noon, as the spec says (Req 3.6); the profile marks the hour pillar as assumed.
        let body = try await post("/internal/astrology/bazi", Body(date: birth.date, time: birth.time ?? "12:00", place: birth.place))
        return try JSONDecoder().decode(BaziReading.self, from: body).displayNames()
    }

    private struct NatalBody: Encodable {
        var date: String
        var time: String?
        var place: BirthData.Place
    }

    /// The chart; with no birth time astrology casts for noon and marks the houses unreliable.
    func natalChart(_ birth: BirthData) async throws -> NatalChartSummary {
        let body = try await post(AstrologyEndpoint.natalChartPath, NatalBody(date: birth.date, time: birth.time, place: birth.place))
        return try JSONDecoder().decode(NatalChartSummary.self, from: body)
    }

    /// The chart drawn as SVG (light theme, for paper).
    func natalChartPicture(_ birth: BirthData) async throws -> String {
        String(buffer: try await post(AstrologyEndpoint.natalChartSVGPath + "?theme=light", NatalBody(date: birth.date, time: birth.time, place: birth.place)))
    }

    /// POSTs `body` as JSON; on 401 once more with a fresh token (identity's key may have rotated since).
    private func post(_ path: String, _ body: some Encodable) async throws -> ByteBuffer {
        guard let tokens else { throw Unavailable(description: "SERVICE_SECRET is not set, so content cannot call astrology") }
        var request = HTTPClientRequest(url: baseURL.absoluteString.trimmingSuffix("/") + path)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(body)))
        for attempt in 1...2 {
            let token: String
            do { token = try await tokens.token() } catch { throw Unavailable(description: "no service token: \(error)") }
            request.headers.replaceOrAdd(name: "authorization", value: "Bearer \(token)")
            let response: HTTPClientResponse
            do { response = try await http.execute(request, timeout: .seconds(10)) } catch {
                throw Unavailable(description: "astrology unreachable: \(error)")
            }
            let body = try await response.body.collect(upTo: 4 << 20)
            switch response.status.code {
            case 200:
                return body
            case 401 where attempt == 1:
                await tokens.invalidate()
                continue
            case 400, 422:
                let problem = try? JSONDecoder().decode(Problem.self, from: body)
                let errors = (problem?.errors ?? []).map { Problem.FieldError(field: "birth." + $0.field, message: $0.message) }
                throw errors.isEmpty ? Problem.invalid(field: "birth", problem?.detail ?? "is not valid") : Problem.invalid(errors)
            default:
                throw Unavailable(description: "astrology answered \(response.status.code): \(String(buffer: body).prefix(200))")
            }
        }
        throw Unavailable(description: "astrology refused content's service token")
    }
}
