/*
 * PocketChat: a terminal chat over dev.pocket.LlmModule, the Java API an Android app uses.
 *
 *   java -Dpocket.jni.library=build/java/libpocket_jni.so -cp build/java/pocket.jar \
 *       demo_apps/cli/java/PocketChat.java smol.pocket [--tokenizer tokenizer.json]
 *
 * Reads one message per line from stdin and streams the reply. Commands: /reset forgets the
 * conversation, /stats prints the last reply's statistics, /exit (or end of input) quits.
 * Options: --tokenizer PATH (default: the one embedded in the .pocket file), --system TEXT,
 * --max-new-tokens N (default 256), --temperature T (default 0: greedy), --top-p P, --seed S.
 */
package dev.pocket.demo;

import dev.pocket.GenerationConfig;
import dev.pocket.LlmModule;
import dev.pocket.LlmStats;
import dev.pocket.PocketException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

public final class PocketChat {
  private PocketChat() {}

  public static void main(String[] args) throws IOException {
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    PrintStream err = new PrintStream(System.err, true, "UTF-8");
    System.exit(run(args, System.in, out, err, System.console() != null));
  }

  /** The whole program, callable in-process (tests); returns the exit code. */
  public static int run(String[] args, InputStream in, PrintStream out, PrintStream err, boolean interactive)
      throws IOException {
    Options o;
    try {
      o = Options.parse(args);
    } catch (IllegalArgumentException e) {
      err.println("PocketChat: " + e.getMessage());
      err.println("usage: PocketChat MODEL.pocket [--tokenizer PATH] [--system TEXT] [--max-new-tokens N] "
          + "[--temperature T] [--top-p P] [--seed S]");
      return 2;
    }
    try (LlmModule llm = new LlmModule(o.model, o.tokenizer)) {
      if (o.system != null) llm.setSystemPrompt(o.system);
      out.println("Pocket chat: " + o.model + " (context " + llm.getMaxSeqLen()
          + " tokens). /reset clears the conversation, /stats shows speed, /exit quits.");
      chatLoop(llm, o.config, new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)), out, err,
          interactive);
      return 0;
    } catch (PocketException e) {
      err.println("PocketChat: " + e.getMessage());
      return 1;
    }
  }

  private static void chatLoop(LlmModule llm, GenerationConfig config, BufferedReader in, PrintStream out,
      PrintStream err, boolean interactive) throws IOException {
    while (true) {
      if (interactive) {
        out.print("> ");
        out.flush();
      }
      String line = in.readLine();
      if (line == null || line.trim().equals("/exit")) return;
      line = line.trim();
      if (line.isEmpty()) continue;
      if (line.equals("/reset")) {
        llm.reset();
        out.println("(conversation reset)");
        continue;
      }
      if (line.equals("/stats")) {
        out.println(llm.getStats());
        continue;
      }
      reply(llm, line, config, out, err);
    }
  }

  /** Streams one reply; a full context starts a new conversation and retries once. */
  private static void reply(LlmModule llm, String message, GenerationConfig config, PrintStream out,
      PrintStream err) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      try {
        LlmStats stats = llm.chat(message, config, piece -> {
          out.print(piece);
          out.flush();
        });
        out.println();
        if (stats.getStopReason().equals("context_full")) {
          llm.reset();
          out.println("(context full: conversation reset)");
        }
        return;
      } catch (PocketException e) {
        if (e.getStatus() != PocketException.OUT_OF_RANGE || attempt > 0) {
          err.println("error: " + e.getMessage());
          return;
        }
        llm.reset();
        out.println("(context full: conversation reset)");
      }
    }
  }

  /** Command-line options. */
  static final class Options {
    String model;
    String tokenizer;
    String system;
    GenerationConfig config;

    static Options parse(String[] args) {
      Options o = new Options();
      GenerationConfig.Builder b = GenerationConfig.builder();
      for (int i = 0; i < args.length; ++i) {
        String a = args[i];
        if (!a.startsWith("--")) {
          if (o.model != null) throw new IllegalArgumentException("more than one model: " + a);
          o.model = a;
          continue;
        }
        if (i + 1 >= args.length) throw new IllegalArgumentException(a + " needs a value");
        String v = args[++i];
        switch (a) {
          case "--tokenizer": o.tokenizer = v; break;
          case "--system": o.system = v; break;
          case "--max-new-tokens": b.maxNewTokens(Integer.parseInt(v)); break;
          case "--temperature": b.temperature(Float.parseFloat(v)); break;
          case "--top-p": b.topP(Float.parseFloat(v)); break;
          case "--seed": b.seed(Long.parseLong(v)); break;
          default: throw new IllegalArgumentException("unknown option " + a);
        }
      }
      if (o.model == null) throw new IllegalArgumentException("no model given");
      o.config = b.build();
      return o;
    }
  }
}
