// pocket-chat: chat with a .pocket LLM in the terminal, through the Swift API (TextRunner).
//
//   swift build --package-path bindings/swift
//   bindings/swift/.build/debug/pocket-chat smol.pocket [--tokenizer tokenizer.json] [options]
//
// Each line read from standard input is one chat turn; the reply streams to standard output,
// followed by a newline. /reset forgets the conversation, /exit (or the end of input) quits.
// Ctrl-C stops a reply; at the prompt it quits. Notices and --stats go to standard error.
import Foundation
import Pocket

let usage = """
  usage: pocket-chat MODEL.pocket [--tokenizer PATH] [--system TEXT] [--max-new-tokens N]
                     [--temperature T] [--top-k K] [--top-p P] [--seed N] [--threads N] [--stats]
    --tokenizer PATH   tokenizer.json, tiktoken or tokenizer.bin (default: the one in the program)
    --system TEXT      system prompt of the conversation (default: the model's)
    --stats            print timings after each reply (to standard error)
  In the chat: /reset forgets the conversation, /exit quits.
  """

struct Options {
  var model = ""
  var tokenizer: String?
  var system: String?
  var config = GenerationConfig(maxNewTokens: 256)
  var threads = 0
  var stats = false
}

enum UsageError: Error { case bad(String) }

func parse(_ args: [String]) throws -> Options {
  var o = Options()
  var i = 0
  func value() throws -> String {
    i += 1
    guard i < args.count else { throw UsageError.bad("\(args[i - 1]) needs a value") }
    return args[i]
  }
  func number<T: LosslessStringConvertible>(_: T.Type) throws -> T {
    let v = try value()
    guard let n = T(v) else { throw UsageError.bad("\(args[i - 1]): '\(v)' is not a number") }
    return n
  }
  while i < args.count {
    switch args[i] {
    case "--tokenizer": o.tokenizer = try value()
    case "--system": o.system = try value()
    case "--max-new-tokens": o.config.maxNewTokens = try number(Int.self)
    case "--temperature": o.config.temperature = try number(Float.self)
    case "--top-k": o.config.topK = try number(Int.self)
    case "--top-p": o.config.topP = try number(Float.self)
    case "--seed": o.config.seed = try number(UInt64.self)
    case "--threads": o.threads = try number(Int.self)
    case "--stats": o.stats = true
    case "-h", "--help": print(usage); exit(0)
    case let a where a.hasPrefix("-"): throw UsageError.bad("unknown option \(a)")
    case let a:
      guard o.model.isEmpty else { throw UsageError.bad("unexpected argument \(a)") }
      o.model = a
    }
    i += 1
  }
  guard !o.model.isEmpty else { throw UsageError.bad("no model given") }
  return o
}

func eprint(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
func out(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

/// Ctrl-C: stops the reply being generated, or quits at the prompt.
final class Interrupts: @unchecked Sendable {
  private let lock = NSLock()
  private var generating = false
  private var source: DispatchSourceSignal?

  func install(_ runner: TextRunner) {
    signal(SIGINT, SIG_IGN)
    let s = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    s.setEventHandler { [self] in
      lock.lock()
      let busy = generating
      lock.unlock()
      if busy { runner.stop() } else { exit(130) }
    }
    s.resume()
    source = s
  }

  func replying(_ on: Bool) {
    lock.lock()
    generating = on
    lock.unlock()
  }
}

func main() -> Int32 {
  let options: Options
  do {
    options = try parse(Array(CommandLine.arguments.dropFirst()))
  } catch UsageError.bad(let message) {
    eprint("pocket-chat: \(message)\n\(usage)")
    return 2
  } catch {
    return 2
  }
  let runner: TextRunner
  do {
    runner = try TextRunner(modelPath: options.model, tokenizerPath: options.tokenizer)
  } catch {
    eprint("pocket-chat: \(error)")
    return 1
  }
  if let system = options.system { runner.systemPrompt = system }
  if options.threads != 0 { runner.numThreads = options.threads }
  let interrupts = Interrupts()
  interrupts.install(runner)
  let interactive = isatty(STDIN_FILENO) != 0
  if interactive { eprint("Chatting with \(options.model). /reset forgets the conversation, /exit quits.") }
  while true {
    if interactive { out("> ") }
    guard let line = readLine(strippingNewline: true) else { break }
    let message = line.trimmingCharacters(in: .whitespaces)
    switch message {
    case "": continue
    case "/exit", "/quit": return 0
    case "/reset":
      runner.reset()
      eprint("(conversation reset)")
      continue
    default: break
    }
    interrupts.replying(true)
    defer { interrupts.replying(false) }
    do {
      try runner.chat(message, config: options.config) { out($0) }
      out("\n")
      if options.stats { eprint("[\(runner.stats)]") }
    } catch let error as PocketError where error.status == .outOfRange {
      out("\n")
      eprint("pocket-chat: \(error.message)\n(the conversation is full: /reset starts a new one)")
    } catch {
      out("\n")
      eprint("pocket-chat: \(error)")
      return 1
    }
  }
  return 0
}

exit(main())
