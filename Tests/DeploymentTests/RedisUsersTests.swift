import Foundation
import LanternContracts
import LanternTestSupport
import Testing

/// `infra/redis/users.acl`, the ACL file deployments load (compose, Kubernetes, an operated Redis), is made from
/// `RedisAccess.all` and must stay equal to it: a service that gains a stream gains it in the file too.
@Suite("Redis users file")
struct RedisUsersTests {
    static let file = ServiceList.root.appendingPathComponent("infra/redis/users.acl")

    @Test("infra/redis/users.acl is RedisAccess.aclFile() (LANTERN_WRITE_GENERATED=1 writes it)")
    func inStep() throws {
        let expected = RedisAccess.aclFile()
        if ProcessInfo.processInfo.environment["LANTERN_WRITE_GENERATED"] == "1" {
            try FileManager.default.createDirectory(at: Self.file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try expected.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let committed = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(committed == expected, "infra/redis/users.acl is out of step with RedisAccess: run LANTERN_WRITE_GENERATED=1 swift test --filter RedisUsersTests")
    }
}
