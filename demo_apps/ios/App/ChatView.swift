// The chat screen: thin over ChatViewModel's ChatState. Replies stream in, the send button turns
// into a stop button while one is written, the status line shows time to first token and
// tokens/s, and loading, copy progress and errors are visible.
import PocketChatCore
import SwiftUI
import UniformTypeIdentifiers

struct ChatView: View {
  @ObservedObject var model: ChatViewModel
  @State private var draft = ""
  @State private var showSettings = false
  @State private var importing = false

  var body: some View {
    NavigationStack {
      VStack(spacing: 0) {
        status
        messages
        inputRow
      }
      .navigationTitle(Bundle.main.object(forInfoDictionaryKey: "CFBundleDisplayName") as? String ?? "Chat")
      .navigationBarTitleDisplayMode(.inline)
      .toolbar {
        ToolbarItemGroup(placement: .navigationBarTrailing) {
          Button { importing = true } label: { Image(systemName: "doc.badge.plus") }
            .accessibilityLabel("Open a model")
          Button { model.newChat() } label: { Image(systemName: "square.and.pencil") }
            .disabled(model.state.generating)
            .accessibilityLabel("New chat")
          Button { showSettings = true } label: { Image(systemName: "slider.horizontal.3") }
            .accessibilityLabel("Settings")
        }
      }
      .sheet(isPresented: $showSettings) {
        SettingsView(settings: model.state.settings) { model.updateSettings($0) }
      }
      .fileImporter(isPresented: $importing, allowedContentTypes: [.data]) { result in
        if case .success(let url) = result { model.open(url) }
      }
    }
  }

  @ViewBuilder private var status: some View {
    VStack(alignment: .leading, spacing: 4) {
      if let p = model.state.copyProgress {
        ProgressView("Copying the model…", value: p)
      } else if model.state.model == .loading {
        ProgressView("Loading the model…")
      } else if let s = model.state.lastStats {
        Text(String(format: "%.0f ms to first token · %.1f tokens/s", s.timeToFirstTokenMs, s.tokensPerSecond))
      }
      if let error = model.state.error { Text(error).foregroundStyle(.red) }
      if model.state.model == .failed { Text("Open a .pocket model with the document button.") }
    }
    .font(.caption)
    .frame(maxWidth: .infinity, alignment: .leading)
    .padding(.horizontal)
  }

  private var messages: some View {
    ScrollViewReader { proxy in
      ScrollView {
        LazyVStack(spacing: 8) {
          ForEach(model.state.messages) { Bubble(message: $0).id($0.id) }
        }
        .padding()
      }
      .onChange(of: model.state.messages.last?.text) { _ in
        if let last = model.state.messages.last { proxy.scrollTo(last.id, anchor: .bottom) }
      }
    }
  }

  private var inputRow: some View {
    HStack {
      TextField("Message", text: $draft, axis: .vertical)
        .textFieldStyle(.roundedBorder)
        .lineLimit(1...5)
      if model.state.generating {
        Button("Stop") { model.stop() }.buttonStyle(.borderedProminent).tint(.red)
      } else {
        Button("Send") {
          model.send(draft)
          draft = ""
        }
        .buttonStyle(.borderedProminent)
        .disabled(!model.state.canSend || draft.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
      }
    }
    .padding()
  }
}

private struct Bubble: View {
  let message: ChatMessage

  var body: some View {
    let mine = message.role == .user
    HStack {
      if mine { Spacer(minLength: 40) }
      VStack(alignment: .leading, spacing: 4) {
        Text(message.streaming && message.text.isEmpty ? "…" : message.text)
        if let error = message.error {
          Text(error).font(.caption2).foregroundStyle(.red)
        } else if message.stopped {
          Text("stopped").font(.caption2).foregroundStyle(.secondary)
        }
      }
      .padding(10)
      .background(mine ? Color.accentColor.opacity(0.2) : Color.secondary.opacity(0.15),
                  in: RoundedRectangle(cornerRadius: 12))
      if !mine { Spacer(minLength: 40) }
    }
  }
}
