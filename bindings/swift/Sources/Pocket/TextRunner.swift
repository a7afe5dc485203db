// TextRunner: the LLM runner of pocket_llm.h (tokenizer, sampler, KV cache) for a program
// exported by `pocket llm export`. Text streams to a closure or through an AsyncThrowingStream;
// both pull it from the runner's one generation loop (pk_runner_start / pk_runner_next).
import CPocket
import Foundation

/// Generates text with a chat model.
///
///     let runner = try TextRunner(modelPath: "smol.pocket", tokenizerPath: "tokenizer.json")
///     try runner.generate("Hello", config: .init(maxNewTokens: 64)) { piece in print(piece, terminator: "") }
///     print(runner.stats)
///
///     for try await piece in runner.stream("Once upon a time") { print(piece, terminator: "") }
///
/// Threads (pocket_llm.h's contract): one generation runs at a time. A generation started
/// while another runs, from another thread or from inside the piece closure, throws `.busy`
/// at once instead of waiting (a generation can take long); only one that meets a generation
/// already told to stop (`stop()`, `reset()`, a stream whose consumer left) waits for it to
/// end, which takes at most a token. Everything else works from any
/// thread at any time, also during a generation: `stop()` ends it after its current token;
/// `reset()` stops it and forgets once it has ended; a `systemPrompt` set meanwhile applies
/// after it; `stats`, `position`, `numThreads`, `encode` and `decode` do not wait. The piece closure runs on the
/// generating thread. A runner is freed when its last reference goes, so never while a call
/// on it runs.
public final class TextRunner: @unchecked Sendable {
  private let handle: OpaquePointer
  private let lock = NSCondition()  // guards the state below; never held during a generation
  private var generating = false
  private var generatingThread: Thread?
  private var stopRequested = false  // the running generation was told to stop
  private var resetAfterGeneration = false
  private var systemPromptPending = false  // set during a generation: applied when it ends
  private var storedSystemPrompt: String?
  private var threads = 0

  /// Loads an LLM program and its tokenizer: tokenizer.json, a tiktoken file or a llama2.c
  /// tokenizer.bin at `tokenizerPath`, or the tokenizer embedded in the program when nil.
  /// Throws `.notFound` for a missing file (or no embedded tokenizer), `.invalidProgram` for
  /// a malformed one, `.invalidArgument` for a program that is not an LLM.
  public init(modelPath: String, tokenizerPath: String? = nil) throws {
    var h: OpaquePointer?
    try modelPath.withCString { model in
      if let tokenizerPath {
        try tokenizerPath.withCString { try check(pk_runner_create(model, $0, &h)) }
      } else {
        try check(pk_runner_create(model, nil, &h))
      }
    }
    guard let h else { throw PocketError(.internal, "the runtime returned no runner") }
    handle = h
  }

  /// Loads the LLM program stored in `length` bytes of the open file `fileDescriptor` at
  /// `offset`, mapped in place when possible, as `Module(fileDescriptor:offset:length:)` does;
  /// the descriptor is borrowed for the call. `tokenizerPath`: as above (nil: embedded).
  public init(fileDescriptor: Int32, offset: UInt64, length: UInt64, tokenizerPath: String? = nil) throws {
    var h: OpaquePointer?
    if let tokenizerPath {
      try tokenizerPath.withCString { try check(pk_runner_create_fd(fileDescriptor, offset, length, $0, &h)) }
    } else {
      try check(pk_runner_create_fd(fileDescriptor, offset, length, nil, &h))
    }
    guard let h else { throw PocketError(.internal, "the runtime returned no runner") }
    handle = h
  }

  deinit { pk_runner_destroy(handle) }

  // ---- properties -------------------------------------------------------------------------

  /// The model's context length in tokens.
  public var maxSeqLen: Int { Int(pk_runner_max_seq_len(handle)) }
  public var vocabSize: Int { Int(pk_runner_vocab_size(handle)) }
  /// Tokens in the KV cache: the conversation so far.
  public var position: Int { Int(pk_runner_position(handle)) }

  /// The system prompt of the next first chat turn. nil until set: the runner then uses the
  /// model's default (its `default_system_prompt` metadata), if it has one. Setting nil or ""
  /// removes it. Set during a generation, it applies once that generation has ended.
  public var systemPrompt: String? {
    get { lock.locked { storedSystemPrompt } }
    set {
      lock.locked {
        storedSystemPrompt = newValue ?? ""
        if generating {
          systemPromptPending = true
        } else {
          applySystemPrompt()
        }
      }
    }
  }

  /// Threads kernels may use: 1 runs on the generating thread only; 0 (or less) is the default.
  public var numThreads: Int {
    get { lock.locked { threads } }
    set {
      lock.locked {
        threads = max(0, min(newValue, Int(Int32.max)))
        _ = pk_runner_set_num_threads(handle, Int32(threads))
      }
    }
  }

  /// Timings, counts and stop reason of the last generation (no stop reason while one runs).
  public var stats: GenerationStats {
    var s = GenerationStats()
    var prompt: Int32 = 0
    var generated: Int32 = 0
    _ = pk_runner_stats(handle, &s.loadMs, &s.timeToFirstTokenMs, &s.prefillTokensPerSecond,
                        &s.decodeTokensPerSecond, &prompt, &generated)
    s.promptTokens = Int(prompt)
    s.generatedTokens = Int(generated)
    s.stopReason = StopReason(rawValue: String(cString: pk_runner_stop_reason(handle)))
    return s
  }

  // ---- generation -------------------------------------------------------------------------

  /// Streams the continuation of `prompt` to `onPiece` (whole UTF-8 characters) and returns
  /// the whole text. Each call starts a new text. If `onPiece` throws, generation stops and
  /// the error is rethrown. A prompt that does not fit the context throws `.outOfRange`.
  @discardableResult
  public func generate(_ prompt: String, config: GenerationConfig = .init(),
                       onPiece: (String) throws -> Void = { _ in }) throws -> String {
    try pulling(config, onPiece) { c, generation in
      prompt.withCString { pk_runner_start(handle, $0, c, generation) }
    }
  }

  /// One chat turn: `message` is formatted with the model's chat template (the system prompt
  /// on the first turn) and the reply streamed to `onPiece` and returned. Earlier turns stay
  /// in the KV cache until `reset()`.
  @discardableResult
  public func chat(_ message: String, config: GenerationConfig = .init(),
                   onPiece: (String) throws -> Void = { _ in }) throws -> String {
    try pulling(config, onPiece) { c, generation in
      message.withCString { pk_runner_start_chat(handle, $0, c, generation) }
    }
  }

  /// Generates token ids after `prompt` (ids as given; no BOS is added).
  public func generateIds(_ prompt: [Int32], config: GenerationConfig = .init()) throws -> [Int32] {
    try generation {
      try config.withCConfig { c in
        let capacity = max(0, min(config.maxNewTokens, Int(pk_runner_max_seq_len(handle))))
        var out = [Int32](repeating: 0, count: capacity)
        var n = 0
        try prompt.withUnsafeBufferPointer { p in
          try out.withUnsafeMutableBufferPointer { o in
            try check(pk_runner_generate_ids(handle, p.baseAddress, p.count, c, o.baseAddress, o.count, &n))
          }
        }
        return Array(out.prefix(n))
      }
    }
  }

  /// `generate` as an async sequence of pieces. Generation runs on a thread of its own, off
  /// the caller's task, at most 16 pieces ahead of the reader; when the consuming task is
  /// cancelled or stops iterating, generation stops after the current token.
  ///
  ///     for try await piece in runner.stream("Hello", config: .init(maxNewTokens: 32)) { ... }
  public func stream(_ prompt: String, config: GenerationConfig = .init()) -> AsyncThrowingStream<String, Error> {
    makeStream { runner, onPiece in try runner.generate(prompt, config: config, onPiece: onPiece) }
  }

  /// `chat` as an async sequence of pieces, like `stream`.
  public func chatStream(_ message: String, config: GenerationConfig = .init()) -> AsyncThrowingStream<String, Error> {
    makeStream { runner, onPiece in try runner.chat(message, config: config, onPiece: onPiece) }
  }

  /// Ends the running generation after its current token (its call returns normally, with
  /// stop reason `.cancelled`). Any thread may call it; it has no effect on a later generation.
  public func stop() {
    lock.locked {
      if generating { stopRequested = true }
      pk_runner_stop(handle)
    }
  }

  /// Forgets the conversation. During a generation (from the piece closure or another
  /// thread), it stops the generation and forgets once that has ended.
  public func reset() {
    lock.locked {
      if generating {
        resetAfterGeneration = true
        stopRequested = true
        pk_runner_stop(handle)
      } else {
        _ = pk_runner_reset(handle)
      }
    }
  }

  // ---- tokenizer --------------------------------------------------------------------------

  /// Token ids of `text`, with the model's BOS first when `addBos`.
  public func encode(_ text: String, addBos: Bool = false) throws -> [Int32] {
    try text.withCString { t in
      var ids = [Int32](repeating: 0, count: text.utf8.count + 2)
      var n = 0
      while true {
        let status = ids.withUnsafeMutableBufferPointer {
          pk_runner_encode(handle, t, addBos ? 1 : 0, $0.baseAddress, $0.count, &n)
        }
        if status == PK_STATUS_OUT_OF_RANGE, n > ids.count {
          ids = [Int32](repeating: 0, count: n)
          continue
        }
        try check(status)
        return Array(ids.prefix(n))
      }
    }
  }

  /// The text of `ids`.
  public func decode(_ ids: [Int32]) throws -> String {
    try ids.withUnsafeBufferPointer { p in
      var text = [UInt8](repeating: 0, count: ids.count * 8 + 1)
      var n = 0
      while true {
        let status = text.withUnsafeMutableBufferPointer {
          $0.withMemoryRebound(to: CChar.self) {
            pk_runner_decode(handle, p.baseAddress, p.count, $0.baseAddress, $0.count, &n)
          }
        }
        if status == PK_STATUS_OUT_OF_RANGE, n + 1 > text.count {
          text = [UInt8](repeating: 0, count: n + 1)
          continue
        }
        try check(status)
        return String(decoding: text.prefix(n), as: UTF8.self)
      }
    }
  }

  // ---- helpers ----------------------------------------------------------------------------

  /// Runs `body` as the one generation of this runner; throws `.busy` when one runs (after
  /// waiting for it when it was told to stop, unless this is its own thread).
  private func generation<R>(_ body: () throws -> R) throws -> R {
    try lock.locked {
      while generating, stopRequested, generatingThread != Thread.current { lock.wait() }
      guard !generating else {
        throw PocketError(.busy, "the runner is generating (on another thread, or this is its piece "
          + "closure): one generation at a time; stop() ends it")
      }
      generating = true
      generatingThread = Thread.current
    }
    defer {
      lock.locked {
        generating = false
        generatingThread = nil
        stopRequested = false
        lock.broadcast()
        if resetAfterGeneration {
          resetAfterGeneration = false
          _ = pk_runner_reset(handle)
        }
        if systemPromptPending {
          systemPromptPending = false
          applySystemPrompt()
        }
      }
    }
    return try body()
  }

  /// Hands the stored system prompt to the runner; with the lock held and no generation running.
  private func applySystemPrompt() {
    _ = (storedSystemPrompt ?? "").withCString { pk_runner_set_system_prompt(handle, $0) }
  }

  /// Starts a generation with `start` and pulls its pieces into `onPiece` until it ends; a
  /// throwing `onPiece` stops it (the error is rethrown once it has ended). Returns the text.
  private func pulling(_ config: GenerationConfig, _ onPiece: (String) throws -> Void,
                       _ start: (OpaquePointer, UnsafeMutablePointer<UInt64>) -> pk_status) throws -> String {
    try generation {
      try config.withCConfig { c in
        var id: UInt64 = 0
        try check(start(c, &id))
        var text = ""
        var failure: Error?
        while true {
          var piece: UnsafePointer<CChar>?
          var size = 0
          var done: Int32 = 0
          try check(pk_runner_next(handle, id, &piece, &size, &done))
          if done != 0 { break }
          let bytes = UnsafeRawBufferPointer(start: piece, count: size)
          let next = String(decoding: bytes, as: UTF8.self)
          text += next
          guard failure == nil else { continue }
          do {
            try onPiece(next)
          } catch {
            failure = error
            pk_runner_stop(handle)  // ends at the next pull
          }
        }
        if let failure { throw failure }
        return text
      }
    }
  }

  /// How many pieces a stream's generating thread may run ahead of its reader. A stop (the stop
  /// button while the screen catches up) then takes effect within that many tokens of what the
  /// reader has seen, and a reader that stalls does not buffer a whole answer.
  static let streamAhead = 16

  private func makeStream(_ run: @escaping @Sendable (TextRunner, (String) throws -> Void) throws -> Void)
    -> AsyncThrowingStream<String, Error> {
    AsyncThrowingStream(String.self, bufferingPolicy: .bufferingOldest(Self.streamAhead)) { continuation in
      let thread = Thread { [self] in
        do {
          try run(self) { piece in
            // A full buffer drops the new piece and hands it back: wait for the reader and offer
            // it again. (AsyncThrowingStream does not tell the writer when the reader takes one.)
            while true {
              switch continuation.yield(piece) {
              case .enqueued: return
              case .terminated: throw StreamTerminated()
              case .dropped: usleep(500)
              @unknown default: return
              }
            }
          }
          continuation.finish()
        } catch is StreamTerminated {
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      thread.stackSize = 8 << 20
      continuation.onTermination = { [self] termination in
        if case .cancelled = termination { stop() }
      }
      thread.start()
    }
  }
}

/// The consumer of a stream went away.
private struct StreamTerminated: Error {}
