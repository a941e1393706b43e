import LanternCore
import NIOCore
import PostgresNIO

/// A local day binds and reads as PostgreSQL's `date` in its binary form (days since 2000-01-01), so neither side
/// parses text for it. Written out for the reason `AppID`'s is: `LocalDay` is also `Codable`, and PostgresNIO's
/// default for `Codable` would send JSON.
extension LocalDay: PostgresEncodable, PostgresDecodable {
    public static var psqlType: PostgresDataType { .date }
    public static var psqlFormat: PostgresFormat { .binary }

    /// 2000-01-01, PostgreSQL's day 0.
    static let postgresEpochJDN = 2_451_545

    public func encode<Encoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<Encoder>) throws {
        guard let days = Int32(exactly: julianDayNumber - Self.postgresEpochJDN) else { throw OutOfRange(day: self) }
        byteBuffer.writeInteger(days)
    }

    public init<Decoder: PostgresJSONDecoder>(from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat,
                                             context: PostgresDecodingContext<Decoder>) throws {
        // ±infinity (Int32.max, Int32.min) is no day; no column of ours holds it.
        guard type == .date, format == .binary, buffer.readableBytes == 4, let days = buffer.readInteger(as: Int32.self),
              days != .max, days != .min else {
            throw PostgresDecodingError.Code.typeMismatch
        }
        self.init(julianDayNumber: Int(days) + Self.postgresEpochJDN)
    }

    struct OutOfRange: Error, CustomStringConvertible {
        var day: LocalDay
        var description: String { "\(day) is beyond PostgreSQL's date range" }
    }
}
