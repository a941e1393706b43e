/// The segments of a request path as ranges of its UTF-8 bytes, empty ones skipped (as `split(separator:)` does):
/// what `CanonicalPath` and `OperationTable` read on every request, without a `String` per segment.
enum PathSegments {
    static func ranges(_ bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(8)
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
            if index > start { ranges.append(start..<index) }
            start = index + 1
        }
        return ranges
    }
}
