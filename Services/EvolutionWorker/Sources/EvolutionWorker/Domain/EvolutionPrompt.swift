import Foundation

/// What the image model is asked to draw (Symbi Req 8.2, 12): the evolved ghost, in the app's look. It names the
/// stage and the mood's tone, nothing else: no user, no health value ever reaches the model.
public struct EvolutionPrompt: Sendable, Equatable {
    public var stage: Int
    public var tone: GhostDrawing.Tone
    /// Whether the previous form comes with the prompt as its input picture.
    public var continuesPrevious: Bool

    public init(stage: Int, tone: GhostDrawing.Tone, continuesPrevious: Bool) {
        self.stage = stage
        self.tone = tone
        self.continuesPrevious = continuesPrevious
    }

    public init(job: EvolutionJob, continuesPrevious: Bool) {
        self.init(stage: job.stage, tone: GhostDrawing.tone(ofState: job.state), continuesPrevious: continuesPrevious)
    }

    public var text: String {
        let start = continuesPrevious
            ? "The attached picture is a pet ghost creature. Draw its next evolution: clearly the same character (same face, body shape and colours), grown and more magical."
            : "Draw an evolved pet ghost creature for a mobile app."
        let mood = switch tone {
        case .bright: "It is happy and energetic: bright eyes, a big smile, lively glow."
        case .calm: "It is calm and content: soft smile, gentle glow."
        case .dark: "It is having a hard time: darker purple tones, more prominent spooky drips and a stronger eerie glow, a worried but still cute face."
        }
        return """
            \(start)
            Style: a cute, rounded ghost with big expressive glowing eyes and soft shapes; purple body in the range #6B46C1 to #9333EA; \
            Halloween-spooky touches that stay adorable: dripping edges, glowing eyes, an ethereal wispy trail.
            \(mood)
            This is evolution stage \(stage): the higher the stage, the more accessories it has gathered (a glowing aura, a little hat or crown, \
            bats, a lantern, a star cape, spirit orbs), keeping everything from earlier stages.
            One character, centred, whole body visible, on a dark night background. Square picture. No text, letters or watermark.
            """
    }
}
