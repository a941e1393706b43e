import Foundation
import OpenAPIRuntime

extension Client {
    /// A client set up as Lantern's answers need: times are decoded with or without fractional seconds (the API
    /// writes milliseconds, `2026-11-24T12:33:31.932Z`, which the generator's default transcoder refuses), and every
    /// request carries the app's current access token.
    ///
    /// ```swift
    /// let lantern = Client.lantern(serverURL: URL(string: "https://api.example.com")!, transport: URLSessionTransport()) {
    ///     await session.accessToken
    /// }
    /// ```
    public static func lantern(serverURL: URL, transport: any ClientTransport,
                               accessToken: @escaping @Sendable () async throws -> String?) -> Client {
        Client(serverURL: serverURL, configuration: .init(dateTranscoder: LanternDates()), transport: transport,
               middlewares: [BearerToken(accessToken)])
    }
}

/// ISO 8601 times as Lantern writes them (UTC, milliseconds) and reads them (with or without a fraction).
public struct LanternDates: DateTranscoder {
    public init() {}

    public func encode(_ date: Date) throws -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    public func decode(_ text: String) throws -> Date {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Expected an ISO 8601 time, got '\(text)'."))
    }
}
