import SwiftUI

@main
struct PocketChatApp: App {
  @StateObject private var model = ChatViewModel()

  var body: some Scene {
    WindowGroup {
      ChatView(model: model)
    }
  }
}
