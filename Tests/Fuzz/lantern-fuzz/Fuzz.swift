import Foundation
import FuzzChecks

#if FUZZING
/// The libFuzzer entry point (built by `scripts/fuzz.sh` with `-sanitize=fuzzer,address`): the target is named by
/// `LANTERN_FUZZ_TARGET`, so one instrumented binary serves every parser.
let target: FuzzTarget = {
    guard let name = getenv("LANTERN_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name) else {
        fatalError("set LANTERN_FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue))")
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    do {
        try target.check(bytes)
    } catch {
        FileHandle.standardError.write(Data("FINDING (\(target.rawValue)): \(error)\n".utf8))
        abort()  // libFuzzer saves the input as a crash
    }
    return 0
}
#else
/// Without the fuzzer: replays saved inputs, `lantern-fuzz <target> [--write-outputs DIR] <file or folder>…`, to
/// look at a finding in a debugger or a plain build. `--write-outputs` keeps each accepted image's input and
/// output (`<n>.in`, `<n>.out`) for an independent decoder (`scripts/fuzz/decode_check.py`).
@main
struct Replay {
    static func main() throws {
        var arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.popFirst(), let target = FuzzTarget(rawValue: name) else {
            print("usage: lantern-fuzz <\(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|"))> [--write-outputs DIR] <file or folder>…")
            exit(2)
        }
        var outputs: URL?
        if arguments.first == "--write-outputs", let folder = arguments.dropFirst().first {
            let url = URL(fileURLWithPath: folder)
            arguments = arguments.dropFirst(2)
            try? FileManager.default.removeItem(at: url)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            outputs = url
        }
        var findings = 0, inputs = 0
        for path in arguments {
            for file in try FuzzInputs.files(at: path) {
                inputs += 1
                let bytes = try FuzzInputs.bytes(of: file)
                if let outputs, let image = FuzzInputs.sanitized(bytes, for: target) {
                    try Data(bytes).write(to: outputs.appendingPathComponent("\(inputs).in"))
                    try Data(image).write(to: outputs.appendingPathComponent("\(inputs).out"))
                }
                do { print("\(file): \(try target.check(bytes))") } catch {
                    findings += 1
                    print("\(file): FINDING \(error)")
                }
            }
        }
        print("\(inputs) inputs, \(findings) findings")
        exit(findings == 0 ? 0 : 1)
    }
}
#endif
