import PocketChatCore
import SwiftUI

/// System prompt (a change starts a new chat) and temperature.
struct SettingsView: View {
  @Environment(\.dismiss) private var dismiss
  @State var settings: ChatSettings
  let onDone: (ChatSettings) -> Void

  var body: some View {
    NavigationStack {
      Form {
        Section("System prompt (a change starts a new chat)") {
          TextField("The model's default", text: $settings.systemPrompt, axis: .vertical)
        }
        Section(String(format: "Temperature %.2f", settings.temperature)) {
          Slider(value: $settings.temperature, in: 0...1.5)
        }
      }
      .navigationTitle("Settings")
      .toolbar {
        ToolbarItem(placement: .cancellationAction) { Button("Cancel") { dismiss() } }
        ToolbarItem(placement: .confirmationAction) {
          Button("Done") {
            onDone(settings)
            dismiss()
          }
        }
      }
    }
  }
}
