import FuzzChecks
import Testing

/// Every saved input of every fuzz target — the seed corpora and the findings kept as regressions — replayed in
/// each `make test`, so a parser that breaks on one again fails here and not only under the fuzzer.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    @Test("every seed and every past finding holds its target's property", arguments: FuzzTarget.allCases)
    func replay(target: FuzzTarget) throws {
        let files = try FuzzInputs.saved(for: target)
        #expect(!files.isEmpty, "no seeds for \(target.rawValue) under Tests/Fuzz/Corpus")
        for file in files {
            do { try target.check(try FuzzInputs.bytes(of: file)) } catch let finding as FuzzFinding {
                Issue.record("\(file): \(finding)")
            }
        }
    }
}
