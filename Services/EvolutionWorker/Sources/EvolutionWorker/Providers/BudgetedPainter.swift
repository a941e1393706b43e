import Foundation
import LanternLLM
import Logging

/// The image model within each account's budget of image calls (`EVOLUTION_IMAGE_CALLS_PER_ACCOUNT` per 30 days,
/// `ModelCallBudget.image`), Lantern's own ghost beyond it.
///
/// Device accounts are free and an image call is the most expensive thing Lantern buys; a drawing that fails is
/// retried. Every attempt with the model counts; once an account's calls are spent its evolution is still drawn, by
/// the procedural generator, and marked `local` like any other.
struct BudgetedPainter: EvolutionPainter {
    let model: ModelPainter
    let fallback: LocalPainter
    let budget: ModelCallBudget
    let logger: Logger
    var generator: Generator { .model }

    func paint(_ job: EvolutionJob, previous: [UInt8]?) async throws -> EvolutionImage {
        guard await budget.spend(account: job.userId.lowercased) else {
            logger.info("the account's image calls are spent: drawn by Lantern's generator", metadata: ["evolution": "\(job.evolutionId.lowercased)"])
            return try await fallback.paint(job, previous: previous)
        }
        return try await model.paint(job, previous: previous)
    }
}
