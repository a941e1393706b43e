import Foundation
import GatewayService
import IdentityService
import MediaService
import AstrologyService
import PushWorker
import LanternContracts
import LanternCore
import LanternTestSupport
import Testing

/// There is no container engine on the build machines, so docker-compose.yml and infra/ are kept correct by
/// construction: every executable has a service, and each service sets exactly variables its executable reads.
@Suite("Container deployment")
struct ComposeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The variables each executable reads, recorded while its configuration is built, and its default port.
    static func configurations() throws -> [String: (variables: Set<String>, port: Int)] {
        let identity = VariableRecorder()
        let identityPort = try IdentityConfiguration(settings: .fixed(["DATABASE_URL": "postgres://u:p@h/db", "GOOGLE_CLIENT_IDS": "a", "APPLE_CLIENT_IDS": "b"],
                                                                      recorder: identity)).process.port
        let gateway = VariableRecorder()
        let gatewayPort = try GatewayConfiguration(settings: .fixed([:], recorder: gateway)).process.port
        let media = VariableRecorder()
        let mediaPort = try MediaConfiguration(settings: .fixed(["DATABASE_URL": "postgres://u:p@h/db"], recorder: media)).process.port
        let push = VariableRecorder()
        let pushPort = try PushWorkerConfiguration(settings: .fixed(["DATABASE_URL": "postgres://u:p@h/db"], recorder: push)).process.port
        let astrology = VariableRecorder()
        let astrologyPort = try AstrologyConfiguration(settings: .fixed(["DATABASE_URL": "postgres://u:p@h/db"], recorder: astrology)).process.port
        return ["identity": (identity.variables, identityPort), "gateway": (gateway.variables, gatewayPort), "media": (media.variables, mediaPort),
                "push-worker": (push.variables, pushPort), "astrology": (astrology.variables, astrologyPort)]
    }

    static func variablesRead() throws -> [String: Set<String>] { try configurations().mapValues(\.variables) }

    @Test("Services/services.tsv is the list: Package.swift's executables, compose, Kubernetes, the image and the default ports follow it")
    func oneList() throws {
        let services = try ServiceList.load()
        let names = services.map(\.name)
        let executables = try PackageManifest.load().products.filter(\.isExecutable).map(\.name).filter { !$0.hasSuffix("-bench") }
        #expect(Set(executables) == Set(names), "executables of Package.swift and of Services/services.tsv differ")
        let compose = try Compose.load(Self.root.appendingPathComponent("docker-compose.yml"))
        let configurations = try Self.configurations()
        #expect(Set(configurations.keys) == Set(names), "a service of the list has no configuration check here")
        for service in services {
            #expect(compose.services[service.name]?.environment["HTTP_PORT"] == String(service.port), "compose's port of \(service.name)")
            let manifest = try String(contentsOf: Self.root.appendingPathComponent("infra/k8s/\(service.name).yaml"), encoding: .utf8)
            #expect(manifest.contains("containerPort: \(service.port)"), "Kubernetes port of \(service.name)")
            #expect(configurations[service.name]?.port == service.port, "default HTTP_PORT of \(service.name)")
            if let variable = service.urlVariable {
                #expect(configurations.values.contains { $0.variables.contains(variable) }, "nothing reads \(variable)")
            }
        }
        let identity = try #require(services.first { $0.name == "identity" })
        #expect(IdentityEndpoint.localURL == "http://127.0.0.1:\(identity.port)")
        let dockerfile = try String(contentsOf: Self.root.appendingPathComponent("infra/Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("Services/services.tsv") && !dockerfile.contains("push-worker"), "the image builds what the list names")
    }

    @Test("every executable in Package.swift has a compose service built from infra/Dockerfile")
    func executablesHaveServices() throws {
        let executables = try ServiceList.load().map(\.name)
        let compose = try Compose.load(Self.root.appendingPathComponent("docker-compose.yml"))
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
        for name in try ServiceList.load().map(\.name) {
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
