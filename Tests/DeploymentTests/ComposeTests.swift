import Foundation
import LanternContracts
import LanternCore
import LanternTestSupport
import Testing

/// There is no container engine on the build machines, so docker-compose.yml and the Kubernetes manifests are kept
/// correct by construction: every executable of the list has its deployment files, and each sets exactly variables
/// its executable reads. What an executable reads is asked of the executable itself (`--print-variables`), run
/// with the environment compose gives it, so these tests hold no list of services of their own.
@Suite("Container deployment")
struct ComposeTests {
    static let root = ServiceList.root

    static func compose() throws -> Compose { try Compose.load(root.appendingPathComponent("docker-compose.yml")) }

    static func kubernetes(_ service: ServiceList.Service) throws -> String {
        try String(contentsOf: root.appendingPathComponent("Services/\(service.folder)/deploy/kubernetes.yaml"), encoding: .utf8)
    }

    /// What `service` reads when started with compose's environment for it (`${X:-default}` taken as its default).
    /// Exit 0 means the configuration is valid there: compose sets every variable the service requires.
    /// Secrets are files at `/run/secrets/<name>` in the containers: here they are what `make compose-secrets`
    /// makes, in a folder of the test's own.
    static let secrets: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-compose-\(UUID().uuidString)")
        let script = Process()
        script.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        script.arguments = ["bash", root.appendingPathComponent("scripts/compose-secrets.sh").path]
        script.environment = ProcessInfo.processInfo.environment.merging(["LANTERN_COMPOSE_SECRETS": folder.path]) { $1 }
        script.standardOutput = FileHandle.nullDevice
        try? script.run()
        script.waitUntilExit()
        return folder.appendingPathComponent("secrets")
    }()

    static func variables(of service: ServiceList.Service, compose: Compose) async throws -> VariableReport {
        let environment = (compose.services[service.name]?.environment ?? [:]).mapValues { value in
            if value.hasPrefix("/run/secrets/") { return secrets.appendingPathComponent(String(value.dropFirst("/run/secrets/".count))).path }
            return value.wholeMatch(of: /\$\{[A-Z0-9_]+:-(.*)\}/).map { String($0.1) } ?? value
        }
        let output = try await ChildProcess.run(ServiceList.binPath.appendingPathComponent(service.name), ["--print-variables"], environment: environment)
        guard output.status == 0 else { throw StartFailure(service: service.name, status: output.status, message: output.stderr) }
        return try JSONDecoder().decode(VariableReport.self, from: output.stdout)
    }

    static func reports() async throws -> [String: VariableReport] {
        let compose = try compose()
        var reports: [String: VariableReport] = [:]
        for service in try ServiceList.load() { reports[service.name] = try await variables(of: service, compose: compose) }
        return reports
    }

    struct StartFailure: Error, CustomStringConvertible {
        var service: String, status: Int32, message: String
        var description: String { "\(service) --print-variables with compose's environment exited \(status): \(message)" }
    }

    /// The report of `--print-variables` (LanternHTTP's `VariableReport`; the tests do not link the services).
    struct VariableReport: Decodable {
        var service: String
        var defaultPort: Int
        var variables: Set<String>
    }

    @Test("Services/services.tsv is the list: Package.swift's executables, the folders, compose, Kubernetes and the default ports follow it")
    func oneList() async throws {
        let services = try ServiceList.load()
        let names = services.map(\.name)
        let executables = try await PackageManifest.load().products.filter(\.isExecutable).map(\.name).filter { !$0.hasSuffix("-bench") }
        #expect(executables == names, "the executables of Package.swift's `services` and of Services/services.tsv differ (or their order)")
        let compose = try Self.compose()
        let reports = try await Self.reports()
        for service in services {
            #expect(compose.services[service.name]?.environment["HTTP_PORT"] == String(service.port), "compose's port of \(service.name)")
            #expect(try Self.kubernetes(service).contains("containerPort: \(service.port)"), "Kubernetes port of \(service.name)")
            #expect(reports[service.name]?.defaultPort == service.port, "default HTTP_PORT of \(service.name)")
            if let variable = service.urlVariable {
                #expect(reports.values.contains { $0.variables.contains(variable) }, "nothing reads \(variable)")
            }
        }
        let identity = try #require(services.first { $0.name == "identity" })
        #expect(IdentityEndpoint.localURL == "http://127.0.0.1:\(identity.port)")
        let dockerfile = try String(contentsOf: Self.root.appendingPathComponent("infra/Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("Services/services.tsv") && !dockerfile.contains("push-worker"), "the image builds what the list names")
    }

    @Test("docker-compose.yml, the image lock and the rendered Kubernetes overlays are current, and every overlay validates strictly (kubernetes-validate) with its invariants")
    func deploymentFilesAssembled() async throws {
        let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                ["bash", Self.root.appendingPathComponent("scripts/deploy-files.sh").path, "--check"])
        #expect(output.status == 0, "\(output.stderr)")
    }

    @Test("every executable of the list has a compose service built from infra/Dockerfile")
    func executablesHaveServices() throws {
        let compose = try Self.compose()
        for name in try ServiceList.load().map(\.name) {
            let service = try #require(compose.services[name], "no compose service for \(name)")
            #expect(service.dockerfile == "infra/Dockerfile" && service.buildArgs["SERVICE"] == name, "\(name)")
            #expect(service.environment["HTTP_PORT"] != nil && service.environment["HTTP_HOST"] == "0.0.0.0", "\(name)")
        }
        #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("infra/Dockerfile").path))
    }

    @Test("compose gives each executable every variable it requires and only variables it reads")
    func variablesMatch() async throws {
        let compose = try Self.compose()
        for service in try ServiceList.load() {
            let report = try await Self.variables(of: service, compose: compose)
            let environment = Set(compose.services[service.name]?.environment.keys.map { $0 } ?? [])
            #expect(environment.subtracting(report.variables).isEmpty,
                    "\(service.name) sets variables it never reads: \(environment.subtracting(report.variables).sorted())")
        }
    }

    @Test("no secret is a plain environment value: services read them from mounted files that make compose-secrets makes")
    func secretsAreFiles() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        let compose = try Self.compose()
        for (name, service) in compose.services {
            for variable in ["DATABASE_URL", "IDENTITY_SIGNING_KEY", "SERVICE_SECRETS", "SERVICE_SECRET", "CHART_FINGERPRINT_KEY", "POSTGRES_PASSWORD"] {
                #expect(service.environment[variable] == nil, "\(name) sets \(variable) in its environment")
            }
            for (variable, value) in service.environment where variable.hasSuffix("_FILE") && value.hasPrefix("/run/secrets/") {
                let secret = String(value.dropFirst("/run/secrets/".count))
                #expect(text.contains("  \(secret):\n    file: .lantern/compose/secrets/\(secret)"), "\(name): no top-level secret \(secret)")
                #expect(FileManager.default.fileExists(atPath: Self.secrets.appendingPathComponent(secret).path), "make compose-secrets makes no \(secret)")
            }
        }
        #expect(!text.contains("lantern-development"), "a development secret in docker-compose.yml")
        #expect(!text.contains("LANTERN_ENVIRONMENT"), "compose is a deployment: production")
    }

    @Test("a start without a required variable fails with exit 78 naming it")
    func requiredVariableNamed() async throws {
        let identity = try #require(try ServiceList.load().first { $0.name == "identity" })
        var compose = try Self.compose()
        compose.services["identity"]?.environment["DATABASE_URL_FILE"] = nil
        let fixed = compose
        await #expect {
            _ = try await Self.variables(of: identity, compose: fixed)
        } throws: { error in
            guard let failure = error as? StartFailure else { return false }
            return failure.status == 78 && failure.message.contains("DATABASE_URL")
        }
    }

    @Test("the Kubernetes manifests use variables the executables read")
    func kubernetesVariables() async throws {
        let reports = try await Self.reports()
        for service in try ServiceList.load() {
            let names = Set(try Self.kubernetes(service).matches(of: /name: ([A-Z][A-Z0-9_]+)/).map { String($0.1) })
            let read = reports[service.name]?.variables ?? []
            #expect(!names.isEmpty)
            #expect(names.isSubset(of: read), "\(service.name): \(names.subtracting(read).sorted())")
        }
    }

    @Test("the documented configuration names every variable the executables read")
    func configurationDocumented() async throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        for (name, report) in try await Self.reports() {
            for variable in report.variables {
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
