import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A throw-away certificate authority and a server certificate for 127.0.0.1 / localhost, made in memory, so
/// fake third parties can speak TLS (and so HTTP/2 by ALPN, as APNs requires) on loopback.
public struct TestTLS: Sendable {
    public let caPEM: String
    public let serverCertificatePEM: String
    public let serverKeyPEM: String

    public static func make() throws -> TestTLS {
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("Lantern test CA") }
        let now = Date()
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 7 * 86_400, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey))
        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 7 * 86_400, issuer: caName,
            subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(caKey))
        return TestTLS(caPEM: try ca.serializeAsPEM().pemString, serverCertificatePEM: try server.serializeAsPEM().pemString,
                       serverKeyPEM: serverKey.pemRepresentation)
    }

    /// Server side: the certificate and key.
    public func serverConfiguration() throws -> TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(serverCertificatePEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(serverKeyPEM.utf8), format: .pem)))
    }

    /// Writes the CA to a file (for `PUSH_TRUST_ROOTS_FILE`) and returns its path.
    public func writeCA(to directory: URL = FileManager.default.temporaryDirectory) throws -> String {
        let url = directory.appendingPathComponent("lantern-test-ca-\(UUID().uuidString).pem")
        try caPEM.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}
