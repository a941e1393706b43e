import AsyncHTTPClient
import Foundation
import LanternCore
import LanternTokens
import NIOCore
import NIOFoundationCompat

/// astrology's Ba Zi (`POST /internal/astrology/bazi`) with content's service token. The birth data passes
/// through to astrology, which validates it; its 422 comes back with each field under `birth.`.
struct AstrologyClient: BaziSource {
    let baseURL: URL
    let tokens: ServiceTokenSource?
    let http: HTTPClient

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    func bazi(_ birth: BirthData) async throws -> BaziReading {
        guard let tokens else { throw Unavailable(description: "SERVICE_SECRET is not set, so content cannot call astrology") }
        struct Body: Encodable {
            var date: String
            var time: String
            var place: BirthData.Place
            var dayBoundary = "23:00"
        }
        var request = HTTPClientRequest(url: baseURL.absoluteString.trimmingSuffix("/") + "/internal/astrology/bazi")
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        // Unknown time: noon, as the spec says (Req 3.6); the profile marks the hour pillar as assumed.
        request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(Body(date: birth.date, time: birth.time ?? "12:00", place: birth.place))))
        for attempt in 1...2 {
            let token: String
            do { token = try await tokens.token() } catch { throw Unavailable(description: "no service token: \(error)") }
            request.headers.replaceOrAdd(name: "authorization", value: "Bearer \(token)")
            let response: HTTPClientResponse
            do { response = try await http.execute(request, timeout: .seconds(10)) } catch {
                throw Unavailable(description: "astrology unreachable: \(error)")
            }
            let body = try await response.body.collect(upTo: 1 << 20)
            switch response.status.code {
            case 200:
                return try JSONDecoder().decode(BaziReading.self, from: body).displayNames()
            case 401 where attempt == 1:
                // identity's key may have rotated since the token was issued: one fresh token, one more try.
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
