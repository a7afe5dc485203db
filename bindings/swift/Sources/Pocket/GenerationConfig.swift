// How to generate (GenerationConfig, mapped to pk_generation_config) and how it went
// (GenerationStats, from pk_runner_stats / pk_runner_stop_reason).
import CPocket

/// Sampling and stopping settings for one generation. The defaults are greedy decoding of up
/// to 256 new tokens. Values are checked by the runtime when a generation starts: a bad one
/// (a negative temperature, topP outside (0, 1], ...) throws `.invalidArgument` naming it.
///
///     try runner.generate("Hello", config: .init(maxNewTokens: 64, temperature: 0.7, topP: 0.9, seed: 7))
public struct GenerationConfig: Sendable, Equatable {
  /// Most tokens to generate (>= 0).
  public var maxNewTokens: Int
  /// 0 is greedy; higher values flatten the distribution (>= 0).
  public var temperature: Float
  /// Keep the k most likely tokens; 0 is off (>= 0).
  public var topK: Int
  /// Keep the smallest set of tokens whose probability reaches p; 1 is off (in (0, 1]).
  public var topP: Float
  /// Drop tokens less likely than minP times the most likely one; 0 is off (in [0, 1]).
  public var minP: Float
  /// Above 1 discourages tokens seen recently; 1 is off (> 0).
  public var repetitionPenalty: Float
  /// Seed of the sampler's random numbers (sampling with the same seed repeats).
  public var seed: UInt64
  /// Generation ends before any of these appears in the text (non-empty strings).
  public var stopStrings: [String]

  public init(maxNewTokens: Int = 256, temperature: Float = 0, topK: Int = 0, topP: Float = 1, minP: Float = 0,
              repetitionPenalty: Float = 1, seed: UInt64 = 0, stopStrings: [String] = []) {
    self.maxNewTokens = maxNewTokens
    self.temperature = temperature
    self.topK = topK
    self.topP = topP
    self.minP = minP
    self.repetitionPenalty = repetitionPenalty
    self.seed = seed
    self.stopStrings = stopStrings
  }

  /// Calls `body` with a pk_generation_config holding these settings.
  func withCConfig<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
    var c: OpaquePointer?
    try check(pk_generation_config_create(&c))
    guard let c else { throw PocketError(.internal, "the runtime returned no generation config") }
    defer { pk_generation_config_destroy(c) }
    try check(pk_generation_config_set_max_new_tokens(c, try int32(maxNewTokens, "maxNewTokens")))
    try check(pk_generation_config_set_temperature(c, temperature))
    try check(pk_generation_config_set_top_k(c, try int32(topK, "topK")))
    try check(pk_generation_config_set_top_p(c, topP))
    try check(pk_generation_config_set_min_p(c, minP))
    try check(pk_generation_config_set_repetition_penalty(c, repetitionPenalty))
    try check(pk_generation_config_set_seed(c, seed))
    for stop in stopStrings {
      try check(pk_generation_config_add_stop_string(c, stop))
    }
    return try body(c)
  }
}

/// Why a generation ended.
public enum StopReason: String, Sendable {
  /// The model produced an end-of-sequence token.
  case eos
  /// A stop string appeared.
  case stopString = "stop_string"
  /// maxNewTokens were generated.
  case maxNewTokens = "max_new_tokens"
  /// The context (max_seq_len tokens) is full.
  case contextFull = "context_full"
  /// `stop()` was called, the piece callback threw, or the stream's consumer went away.
  case cancelled
}

/// Timings and counts of the last generation (`TextRunner.stats`).
public struct GenerationStats: Sendable, Equatable, CustomStringConvertible {
  /// Time to load the program and tokenizer.
  public var loadMs: Double = 0
  /// Time from the start of generation to the first token (the prefill).
  public var timeToFirstTokenMs: Double = 0
  public var prefillTokensPerSecond: Double = 0
  public var decodeTokensPerSecond: Double = 0
  public var promptTokens: Int = 0
  public var generatedTokens: Int = 0
  /// nil before the first generation.
  public var stopReason: StopReason?

  public init() {}

  public var description: String {
    func f(_ x: Double) -> String {
      let r = (x * 10).rounded() / 10
      return "\(r)"
    }
    return "prompt \(promptTokens) tokens, generated \(generatedTokens) tokens; load \(f(loadMs)) ms, "
      + "first token \(f(timeToFirstTokenMs)) ms, prefill \(f(prefillTokensPerSecond)) tok/s, "
      + "decode \(f(decodeTokensPerSecond)) tok/s; stop: \(stopReason?.rawValue ?? "-")"
  }
}
