import DevAppStore

/// The made-up App Store signer tests trust instead of Apple's root: the development stack's own
/// (`Tools/DevAppStore`), made fresh per test with the flaws a test needs (`DevAppStoreSigner.Options`).
public typealias TestAppStore = DevAppStoreSigner
