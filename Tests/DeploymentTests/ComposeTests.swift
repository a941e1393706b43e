import Foundation
import GatewayService
import IdentityService
import MediaService
import AstrologyService
import PushWorker
import LanternCore
import Testing

/// There is no container engine on the build machines, so docker-compose.yml and infra/ are kept correct by
/// construction: every executable has a service, and each service sets exactly variables its executable reads.
@Suite("Container deployment")
struct ComposeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The variables each executable reads, recorded while its configuration is built.
    static func variablesRead() throws -> [String: Set<String>] {
        let identity = VariableRecorder()
        _ = try IdentityConfiguration(settings: .fixed(["DATABASE_URL": "postgres://u:p@h/db", "GOOGLE_CLIENT_IDS": "a", "APPLE_CLIENT_IDS": "b"], recorder: identity))
        let gateway = VariableRecorder()
        _ = try GatewayConfiguration(settings: .fixed([:], recorder: gateway))
        let media = VariableRecorder()
        _ = try MediaConfiguration(settings: .fixed(["DATABASE_URL": "postgres://u:p@h/db"], recorder: media))
        let push = VariableRecorder()
        _ = try PushWorkerConfiguration(settings: .fixed(["DATABASE_URL": "postgres://u:p@h/db"], recorder: push))
        let astrology = VariableRecorder()
        _ = try AstrologyConfiguration(settings: .fixed(["DATABASE_URL": "postgres://u:p@h/db"], recorder: astrology))
        return ["identity": identity.variables, "gateway": gateway.variables, "media": media.variables, "push-worker": push.variables,
                "astrology": astrology.variables]
    }

    @Test("every executable in Package.swift has a compose service built from infra/Dockerfile")
    func executablesHaveServices() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let executables = manifest.matches(of: /\.executable\(name: "([a-z-]+)"/).map { String($0.1) }.filter { !$0.hasSuffix("-bench") }
        let compose = try Compose.load(Self.root.appendingPathComponent("docker-compose.yml"))
        #expect(Set(executables) == ["identity", "media", "astrology", "push-worker", "gateway"])
        for name in executables {
            let service = try #require(compose.services[name], "no compose service for \(name)")
            #expect(service.dockerfile == "infra/Dockerfile" && service.buildArgs["SERVICE"] == name, "\(name)")
            #expect(service.environment["HTTP_PORT"] != nil && service.environment["HTTP_HOST"] == "0.0.0.0", "\(name)")
        }
        #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("infra/Dockerfile").path))
    }

    @Test("compose sets only variables the executable reads, and every one it requires")
    func variablesMatch() throws {
        let compose = try Compose.load(Self.root.appendingPathComponent("docker-compose.yml"))
        let read = try Self.variablesRead()
        let required: [String: Set<String>] = ["identity": ["DATABASE_URL", "REDIS_URL"], "gateway": ["REDIS_URL", "IDENTITY_URL", "MEDIA_URL"],
                                               "media": ["DATABASE_URL", "REDIS_URL", "IDENTITY_URL", "MEDIA_STORAGE_DIR"],
                                               "push-worker": ["DATABASE_URL", "REDIS_URL"], "astrology": ["DATABASE_URL", "IDENTITY_URL", "PLACES_FILE"]]
        for (name, variables) in read {
            let environment = Set(compose.services[name]?.environment.keys.map { $0 } ?? [])
            #expect(environment.subtracting(variables).isEmpty, "\(name) sets variables it never reads: \(environment.subtracting(variables).sorted())")
            #expect(required[name, default: []].isSubset(of: environment), "\(name) misses \(required[name, default: []].subtracting(environment).sorted())")
        }
    }

    @Test("the Kubernetes manifests use variables the executables read")
    func kubernetesVariables() throws {
        let read = try Self.variablesRead()
        for name in ["identity", "media", "astrology", "push-worker", "gateway"] {
            let text = try String(contentsOf: Self.root.appendingPathComponent("infra/k8s/\(name).yaml"), encoding: .utf8)
            let names = Set(text.matches(of: /name: ([A-Z][A-Z0-9_]+)/).map { String($0.1) })
            #expect(!names.isEmpty)
            #expect(names.isSubset(of: read[name] ?? []), "\(name): \(names.subtracting(read[name] ?? []).sorted())")
        }
    }

    @Test("the documented configuration names every variable the executables read")
    func configurationDocumented() throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        for (name, variables) in try Self.variablesRead() {
            for variable in variables {
                #expect(doc.contains("`\(variable)`"), "\(name) reads \(variable), which docs/configuration.md does not mention")
            }
        }
    }
}

/// The subset of docker-compose.yml this repository uses, read by indentation (the file keeps a fixed layout).
struct Compose {
    struct Service {
        var environment: [String: String] = [:]
        var dockerfile: String?
        var buildArgs: [String: String] = [:]
    }
    var services: [String: Service] = [:]

    static func load(_ url: URL) throws -> Compose {
        var compose = Compose()
        var section = ""
        var current: String?
        var block = ""
        for raw in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            let line = String(raw)
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("#") || line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            let indent = line.prefix(while: { $0 == " " }).count
            let text = line.trimmingCharacters(in: .whitespaces)
            switch indent {
            case 0: section = text; current = nil
            case 2 where section == "services:":
                current = String(text.dropLast())
                compose.services[current!] = Service()
            case 4: block = text
            default:
                guard let name = current, let colon = text.firstIndex(of: ":") else { continue }
                let key = String(text[..<colon])
                let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                if block == "environment:", indent == 6 { compose.services[name]?.environment[key] = value }
                if block == "build:", indent == 6, key == "dockerfile" { compose.services[name]?.dockerfile = value }
                if block == "build:", indent == 8 { compose.services[name]?.buildArgs[key] = value }
            }
        }
        return compose
    }
}
