import Foundation
import LanternRendering

/// Lantern's own drawing of an evolution (no image model configured, the default stack): `GhostDrawing`'s SVG for
/// the job's stage, seed and mood, rendered to a PNG by librsvg on Cairo. The same job always gives the same picture.
public struct LocalPainter: EvolutionPainter {
    public let size: Int
    public var generator: Generator { .local }

    public init(size: Int) { self.size = size }

    public func paint(_ job: EvolutionJob, previous: [UInt8]?) async throws -> EvolutionImage {
        let drawing = GhostDrawing(stage: job.stage, seed: job.seed, tone: GhostDrawing.tone(ofState: job.state))
        let png = try await Self.render(drawing, size: size)
        return EvolutionImage(png: png, width: size, height: size, generator: .local)
    }

    /// The drawing as a `size`×`size` PNG, on NIO's blocking pool (tens of milliseconds of CPU).
    public static func render(_ drawing: GhostDrawing, size: Int) async throws -> [UInt8] {
        let svg = drawing.svg
        return try await Renderer.run {
            let canvas = try ImageCanvas(width: size, height: size)
            try canvas.svg(svg, x: 0, y: 0, size: Double(size))
            return Array(try canvas.png())
        }
    }
}
