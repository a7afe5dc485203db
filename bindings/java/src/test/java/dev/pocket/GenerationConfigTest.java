package dev.pocket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** GenerationConfig: pocket_llm.h's defaults, immutability, and every bad value rejected. */
class GenerationConfigTest {
  @Test
  void defaultsMatchPocketLlmH() {
    GenerationConfig d = GenerationConfig.defaults();
    assertEquals(256, d.getMaxNewTokens());
    assertEquals(0f, d.getTemperature());
    assertEquals(0, d.getTopK());
    assertEquals(1f, d.getTopP());
    assertEquals(0f, d.getMinP());
    assertEquals(1f, d.getRepetitionPenalty());
    assertEquals(0L, d.getSeed());
    assertTrue(d.getStopStrings().isEmpty());
  }

  @Test
  void builderAndToBuilder() {
    List<String> stops = new ArrayList<>(Arrays.asList("\n\n", "User:"));
    GenerationConfig c = GenerationConfig.builder().maxNewTokens(7).temperature(0.5f).topK(40).topP(0.9f)
        .minP(0.05f).repetitionPenalty(1.2f).seed(-1L).stopStrings(stops).build();
    stops.clear();
    assertEquals(7, c.getMaxNewTokens());
    assertEquals(0.5f, c.getTemperature());
    assertEquals(40, c.getTopK());
    assertEquals(0.9f, c.getTopP());
    assertEquals(0.05f, c.getMinP());
    assertEquals(1.2f, c.getRepetitionPenalty());
    assertEquals(-1L, c.getSeed(), "seeds are unsigned 64-bit in the runtime; any long is fine");
    assertEquals(Arrays.asList("\n\n", "User:"), c.getStopStrings());
    assertThrows(UnsupportedOperationException.class, () -> c.getStopStrings().add("x"));
    GenerationConfig d = c.toBuilder().maxNewTokens(8).addStopString("###").build();
    assertEquals(8, d.getMaxNewTokens());
    assertEquals(7, c.getMaxNewTokens());
    assertEquals(3, d.getStopStrings().size());
    assertEquals(0.9f, d.getTopP());
    assertTrue(d.toString().contains("maxNewTokens=8"));
  }

  @Test
  void badValuesAreRejected() {
    GenerationConfig.Builder b = GenerationConfig.builder();
    assertThrows(IllegalArgumentException.class, () -> b.maxNewTokens(-1));
    assertThrows(IllegalArgumentException.class, () -> b.temperature(-0.1f));
    assertThrows(IllegalArgumentException.class, () -> b.temperature(Float.NaN));
    assertThrows(IllegalArgumentException.class, () -> b.temperature(Float.POSITIVE_INFINITY));
    assertThrows(IllegalArgumentException.class, () -> b.topK(-1));
    assertThrows(IllegalArgumentException.class, () -> b.topP(0f));
    assertThrows(IllegalArgumentException.class, () -> b.topP(1.01f));
    assertThrows(IllegalArgumentException.class, () -> b.topP(Float.NaN));
    assertThrows(IllegalArgumentException.class, () -> b.minP(-0.01f));
    assertThrows(IllegalArgumentException.class, () -> b.minP(1.5f));
    assertThrows(IllegalArgumentException.class, () -> b.repetitionPenalty(0f));
    assertThrows(IllegalArgumentException.class, () -> b.repetitionPenalty(Float.NaN));
    assertThrows(IllegalArgumentException.class, () -> b.addStopString(""));
    assertThrows(IllegalArgumentException.class, () -> b.addStopString(null));
    assertThrows(IllegalArgumentException.class, () -> b.addStopString("a\0b"));
    assertThrows(IllegalArgumentException.class, () -> b.stopStrings(Arrays.asList("ok", null)));
    assertThrows(IllegalArgumentException.class, () -> b.stopStrings((List<String>) null));
    // A rejected value leaves the builder as it was.
    GenerationConfig c = b.addStopString("keep").build();
    assertEquals(Arrays.asList("keep"), c.getStopStrings());
    assertEquals(256, c.getMaxNewTokens());
  }

  @Test
  void theRuntimeChecksSamplerValues() {
    // One check for every binding: pocket_llm.h's setters, whose message names the value.
    GenerationConfig.Builder b = GenerationConfig.builder();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> b.repetitionPenalty(Float.POSITIVE_INFINITY));
    assertTrue(e.getMessage().contains("repetition_penalty must be > 0 and finite"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> b.minP(Float.NaN));
    assertTrue(e.getMessage().contains("min_p must be in [0, 1]"), e.getMessage());
    assertEquals(1f, b.build().getRepetitionPenalty());
  }
}
