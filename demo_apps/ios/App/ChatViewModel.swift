// Owns the ChatSession for the app's lifetime and publishes its state to SwiftUI. Generation
// runs on TextRunner's thread; the session and this model live on the main actor.
import Foundation
import Pocket
import PocketChatCore

@MainActor
final class ChatViewModel: ObservableObject {
  @Published private(set) var state = ChatState()
  private var session: ChatSession!
  private var reply: Task<Void, Never>?

  init() {
    session = ChatSession { [weak self] in self?.state = $0 }
    Task { await loadStartupModel() }
  }

  func send(_ text: String) {
    reply = Task { await session.send(text) }
  }

  func stop() { session.stop() }

  func newChat() { session.newChat() }

  func updateSettings(_ settings: ChatSettings) { session.updateSettings(settings) }

  /// A model from the file importer: copied once into Application Support (with progress), then
  /// mapped from there.
  func open(_ url: URL) {
    let dest = Self.pickedModel
    Task {
      session.showCopyProgress(0)
      let scoped = url.startAccessingSecurityScopedResource()
      defer { if scoped { url.stopAccessingSecurityScopedResource() } }
      do {
        try? FileManager.default.removeItem(at: dest)  // a new pick replaces the old one
        try await Task.detached {
          try ModelFiles.copyOnce(from: url, to: dest) { p in
            Task { @MainActor [weak self] in self?.session.showCopyProgress(p) }
          }
        }.value
        session.showCopyProgress(nil)
        await session.load { try TextRunner(modelPath: dest.path) }
      } catch {
        session.showCopyProgress(nil)
        let message = "copying the model failed: \(error.localizedDescription)"
        await session.load { throw PocketError(.io, message) }
      }
    }
  }

  /// The model picked earlier, else the one in the app bundle (mapped in place from it).
  private func loadStartupModel() async {
    let picked = Self.pickedModel
    if FileManager.default.fileExists(atPath: picked.path) {
      await session.load { try TextRunner(modelPath: picked.path) }
      return
    }
    let name = Bundle.main.object(forInfoDictionaryKey: "PocketModelFile") as? String ?? "model.pocket"
    let bundled = Bundle.main.url(forResource: name, withExtension: nil)?.path
    await session.load {
      guard let bundled else { throw PocketError(.notFound, "no \(name) in the app: open a model") }
      return try TextRunner(modelPath: bundled)
    }
  }

  private static var pickedModel: URL {
    FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
      .appendingPathComponent("models/picked.pocket")
  }
}
