/// Every payload Lantern publishes, in the order docs/events.md describes them; a test checks the document
/// against this list, so a new payload cannot land undocumented.
public enum EventCatalogue {
    public static let all: [any EventPayload.Type] = [
        IdentityEvents.UserCreated.self, IdentityEvents.UserDeleted.self, IdentityEvents.ProfileRenamed.self,
        IdentityEvents.DeviceRegistered.self, IdentityEvents.DeviceRemoved.self,
        IdentityEvents.PairingEstablished.self, IdentityEvents.PairingDissolved.self,
        MediaEvents.MomentShared.self,
        ContentEvents.FortuneRevealed.self, ContentEvents.RoastGenerated.self, ContentEvents.RoastReacted.self,
        ContentEvents.RoastFavourited.self, ContentEvents.RoastShared.self,
        GamificationEvents.StreakChanged.self, GamificationEvents.BadgeEarned.self, GamificationEvents.RewardUnlocked.self,
        SymbiEvents.EvolutionTriggered.self, SymbiEvents.Evolved.self,
        PushRequest.self, SymbiEvents.EvolutionRequested.self,
        RealtimeFrame.self, RealtimeDisconnect.self,
    ]
}
