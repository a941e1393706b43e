import Foundation
import ImageSanitizer
import LanternLLM
import LanternRendering

/// An evolution drawn by the image model (`EVOLUTION_IMAGE_MODEL`, Gemini): the prompt of `EvolutionPrompt` and the
/// previous form as the input picture.
///
/// What comes back is trusted with nothing: it must be a PNG or JPEG (by its bytes, not its declared type) of sane
/// size and shape, pass `ImageSanitizer`'s checks, and decode; it is then drawn again onto a `size`×`size` canvas and
/// written as a fresh PNG, so the stored file holds the model's pixels and not one byte of its file (metadata,
/// trailing data, an embedded thumbnail).
struct ModelPainter: EvolutionPainter {
    /// Smallest and largest side accepted from the model, and the most lopsided shape (the ghost is drawn square).
    static let sides = 256...4096
    static let maxAspect = 2.0

    let model: any ImageModel
    let modelID: String
    let timeout: Duration
    let size: Int
    let sanitizer = ImageSanitizer(maxPixels: 4096 * 4096, timeBudget: .seconds(2))
    var generator: Generator { .model }

    func paint(_ job: EvolutionJob, previous: [UInt8]?) async throws -> EvolutionImage {
        let request = ImageRequest(prompt: EvolutionPrompt(job: job, continuesPrevious: previous != nil).text, inputImages: previous.map { [.init(bytes: $0, mimeType: "image/png")] } ?? [])
        let drawn: DrawnImage
        do {
            drawn = try await model.draw(request, model: modelID, timeout: timeout)
        } catch let failure as ProviderFailure {
            throw PaintingFailed("\(model.name) \(modelID): \(failure)", retryAfter: failure.retryAfter, rateLimited: failure.reason == .rateLimited)
        }
        let checked: SanitizedImage
        do {
            checked = try await sanitizer.sanitizeInBackground(drawn.bytes)
        } catch {
            throw PaintingFailed("the model's picture (\(drawn.mimeType), \(drawn.bytes.count) bytes) was refused: \(error)")
        }
        guard checked.format == .png || checked.format == .jpeg else {
            throw PaintingFailed("the model's picture is \(checked.format.rawValue), not PNG or JPEG")
        }
        let (width, height) = (checked.width, checked.height)
        guard Self.sides.contains(width), Self.sides.contains(height),
              Double(max(width, height)) / Double(min(width, height)) <= Self.maxAspect else {
            throw PaintingFailed("the model's picture is \(width)×\(height), outside \(Self.sides.lowerBound)–\(Self.sides.upperBound) px or too lopsided")
        }
        let size = self.size
        let bytes = checked.bytes
        do {
            let png = try await Renderer.run {
                let canvas = try ImageCanvas(width: size, height: size)
                try canvas.picture(bytes, x: 0, y: 0, size: Double(size))
                return Array(try canvas.png())
            }
            return EvolutionImage(png: png, width: size, height: size, generator: .model)
        } catch let error as RenderingError {
            throw PaintingFailed("the model's picture does not decode: \(error)")
        }
    }
}
