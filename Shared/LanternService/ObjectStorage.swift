import AsyncHTTPClient
import LanternHTTP
import LanternObjectStorage
import NIOPosix

extension ServiceBuilder {
    /// The object storage `settings` name (a folder or an S3-compatible bucket). A bucket gets an HTTP client of its
    /// own, shut down with the service, and the readiness check `object-store`: ready only when the bucket answers
    /// with these credentials (a missing object is an answer).
    public mutating func addObjectStorage(_ settings: ObjectStorageSettings) throws -> any ObjectFiles {
        var client: HTTPClient?
        let (files, readiness) = try settings.files {
            let made = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                                  configuration: .init(timeout: .init(connect: .seconds(5), read: .seconds(20))))
            client = made
            return made
        }
        if let client { addClient(HTTPClientLifecycle(client: client)) }
        if let readiness { addReadiness("object-store", readiness) }
        return files
    }
}
