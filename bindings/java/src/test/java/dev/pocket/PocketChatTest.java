package dev.pocket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The command-line chat demo (demo_apps/cli/java/PocketChat.java) on the golden tiny LLM with
 * scripted input: in this JVM, and as its own process reading a real stdin pipe.
 */
class PocketChatTest {
  private static final String SCRIPT = "Hi\n\n/stats\n/reset\nHi\nHello there\n/exit\nnever read\n";
  private static final int MAX_NEW = 6;

  private static String[] args() {
    return new String[] {Golden.llmModel(), "--tokenizer", Golden.llmTokenizer(), "--max-new-tokens",
        String.valueOf(MAX_NEW), "--system", "Be brief."};
  }

  /** What the chat should print for "Hi", then (after /reset) "Hi" and "Hello there". */
  private static List<String> expectedReplies() {
    GenerationConfig c = GenerationConfig.builder().maxNewTokens(MAX_NEW).build();
    List<String> replies = new ArrayList<>();
    try (LlmModule llm = new LlmModule(Golden.llmModel(), Golden.llmTokenizer())) {
      llm.setSystemPrompt("Be brief.");
      for (String message : new String[] {"Hi", "Hello there"}) {
        StringBuilder b = new StringBuilder();
        llm.chat(message, c, b::append);
        replies.add(b.toString());
      }
    }
    return replies;
  }

  private static void checkTranscript(String out, List<String> replies) {
    String hi = replies.get(0) + "\n";
    int first = out.indexOf(hi);
    assertTrue(first >= 0, "first reply missing:\n" + out);
    assertTrue(out.contains("LlmStats("), "/stats output missing:\n" + out);
    int reset = out.indexOf("(conversation reset)\n");
    assertTrue(reset > first, "/reset missing:\n" + out);
    int again = out.indexOf(hi, reset);
    assertTrue(again > reset, "after /reset the first reply repeats:\n" + out);
    assertTrue(out.indexOf(replies.get(1) + "\n", again + hi.length()) > 0, "second turn missing:\n" + out);
  }

  @Test
  void scriptedSessionInProcess() throws Exception {
    Class<?> chat = Class.forName("dev.pocket.demo.PocketChat");
    Method run = chat.getMethod("run", String[].class, InputStream.class, PrintStream.class, PrintStream.class,
        boolean.class);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = (Integer) run.invoke(null, args(), new ByteArrayInputStream(SCRIPT.getBytes(StandardCharsets.UTF_8)),
        new PrintStream(out, true, "UTF-8"), new PrintStream(err, true, "UTF-8"), false);
    String text = out.toString("UTF-8");
    assertEquals(0, code, err.toString("UTF-8"));
    assertTrue(text.startsWith("Pocket chat: "), text);
    checkTranscript(text, expectedReplies());

    // Errors: no model, a missing model.
    assertEquals(2, (int) (Integer) run.invoke(null, new String[0], new ByteArrayInputStream(new byte[0]),
        new PrintStream(out), new PrintStream(err), false));
    ByteArrayOutputStream missing = new ByteArrayOutputStream();
    assertEquals(1, (int) (Integer) run.invoke(null, new String[] {"/nonexistent.pocket"},
        new ByteArrayInputStream(new byte[0]), new PrintStream(out), new PrintStream(missing, true, "UTF-8"), false));
    assertTrue(missing.toString("UTF-8").contains("NOT_FOUND"), missing.toString("UTF-8"));
  }

  @Test
  void aFullContextStartsOver() throws Exception {
    // 30 turns overflow the 128-token context; the demo resets and carries on.
    StringBuilder script = new StringBuilder();
    for (int i = 0; i < 30; ++i) script.append("Tell me more\n");
    Method run = Class.forName("dev.pocket.demo.PocketChat").getMethod("run", String[].class, InputStream.class,
        PrintStream.class, PrintStream.class, boolean.class);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = (Integer) run.invoke(null, args(), new ByteArrayInputStream(script.toString().getBytes("UTF-8")),
        new PrintStream(out, true, "UTF-8"), new PrintStream(err, true, "UTF-8"), false);
    assertEquals(0, code, err.toString("UTF-8"));
    assertTrue(out.toString("UTF-8").contains("(context full: conversation reset)"), out.toString("UTF-8"));
    assertEquals("", err.toString("UTF-8"));
  }

  @Test
  @Tag("process")
  void scriptedSessionOnStdin() throws Exception {
    String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    List<String> command = new ArrayList<>();
    command.add(java);
    String library = System.getProperty("pocket.jni.library");
    if (library != null) command.add("-Dpocket.jni.library=" + library);
    command.add("-cp");
    // The console launcher loads -cp entries itself, so test.sh passes the demo's classpath.
    command.add(System.getProperty("pocket.chat.classpath", System.getProperty("java.class.path")));
    command.add("dev.pocket.demo.PocketChat");
    for (String a : args()) command.add(a);
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try (OutputStream stdin = p.getOutputStream()) {
      stdin.write(SCRIPT.getBytes(StandardCharsets.UTF_8));
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (InputStream stdout = p.getInputStream()) {
      byte[] buf = new byte[4096];
      for (int n; (n = stdout.read(buf)) > 0;) out.write(buf, 0, n);
    }
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue());
    checkTranscript(out.toString("UTF-8"), expectedReplies());
  }
}
