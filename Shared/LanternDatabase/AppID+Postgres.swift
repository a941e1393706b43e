import LanternContracts
import NIOCore
import PostgresNIO

/// An app id binds and reads as its text (every schema keeps `app` as `text`); a value no case names fails the
/// row's decoding, as a column of the wrong type would. Written out: `AppID` is also `Codable`, and PostgresNIO's
/// defaults for `Codable` (JSON) and `RawRepresentable` (the raw value) would otherwise both apply.
extension AppID: PostgresEncodable, PostgresDecodable {
    public static var psqlType: PostgresDataType { String.psqlType }
    public static var psqlFormat: PostgresFormat { String.psqlFormat }

    public func encode<Encoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<Encoder>) throws {
        try rawValue.encode(into: &byteBuffer, context: context)
    }

    public init<Decoder: PostgresJSONDecoder>(from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat,
                                             context: PostgresDecodingContext<Decoder>) throws {
        guard let app = AppID(rawValue: try String(from: &buffer, type: type, format: format, context: context)) else {
            throw PostgresDecodingError.Code.failure
        }
        self = app
    }
}
