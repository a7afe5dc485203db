// Kotlin conveniences over the dev.pocket Java API (written for Kotlin 1.3 and later).
//
//   Module.load("model.pocket").use { m ->
//       val y = m.forward(floatArrayOf(1f, 2f, 3f).toTensor(1, 3))[0].dataAsFloatArray
//   }
//   LlmModule("smol.pocket").use { llm ->
//       llm.generate("Hello", GenerationConfig(maxNewTokens = 64)) { piece -> print(piece) }
//       val reply = llm.chatText("How are you?")
//   }
//
// `use {}` on Module and LlmModule is the standard library's AutoCloseable.use
// (kotlin-stdlib-jdk7 before Kotlin 1.8). Passing a lambda as LlmCallback is plain SAM conversion.
@file:JvmName("PocketKotlin")

package dev.pocket

/**
 * A [GenerationConfig] with Kotlin named arguments and defaults (those of pocket_llm.h):
 * `GenerationConfig(maxNewTokens = 64, temperature = 0.7f, topP = 0.9f)`.
 * Throws IllegalArgumentException for an out-of-range value, as the Java builder does.
 */
fun GenerationConfig(
    maxNewTokens: Int = 256,
    temperature: Float = 0f,
    topK: Int = 0,
    topP: Float = 1f,
    minP: Float = 0f,
    repetitionPenalty: Float = 1f,
    seed: Long = 0L,
    stopStrings: List<String> = emptyList()
): GenerationConfig = GenerationConfig.builder()
    .maxNewTokens(maxNewTokens)
    .temperature(temperature)
    .topK(topK)
    .topP(topP)
    .minP(minP)
    .repetitionPenalty(repetitionPenalty)
    .seed(seed)
    .stopStrings(stopStrings)
    .build()

/** A copy of this config with the given values changed. */
fun GenerationConfig.copy(
    maxNewTokens: Int = this.maxNewTokens,
    temperature: Float = this.temperature,
    topK: Int = this.topK,
    topP: Float = this.topP,
    minP: Float = this.minP,
    repetitionPenalty: Float = this.repetitionPenalty,
    seed: Long = this.seed,
    stopStrings: List<String> = this.stopStrings
): GenerationConfig = GenerationConfig(maxNewTokens, temperature, topK, topP, minP, repetitionPenalty, seed, stopStrings)

// ---------------------------------------------------------------------------------- tensors

private fun shapeOf(size: Int, shape: LongArray): LongArray = if (shape.isEmpty()) longArrayOf(size.toLong()) else shape

/** A float32 tensor holding a copy of this array; no shape means one dimension of [size]. */
fun FloatArray.toTensor(vararg shape: Long): Tensor = Tensor.fromBlob(this, shapeOf(size, shape))

/** A float64 tensor holding a copy of this array; no shape means one dimension of [size]. */
fun DoubleArray.toTensor(vararg shape: Long): Tensor = Tensor.fromBlob(this, shapeOf(size, shape))

/** An int32 tensor holding a copy of this array; no shape means one dimension of [size]. */
fun IntArray.toTensor(vararg shape: Long): Tensor = Tensor.fromBlob(this, shapeOf(size, shape))

/** An int64 tensor holding a copy of this array; no shape means one dimension of [size]. */
fun LongArray.toTensor(vararg shape: Long): Tensor = Tensor.fromBlob(this, shapeOf(size, shape))

/** An int8 tensor holding a copy of this array; no shape means one dimension of [size]. */
fun ByteArray.toTensor(vararg shape: Long): Tensor = Tensor.fromBlob(this, shapeOf(size, shape))

/** An int16 tensor holding a copy of this array; no shape means one dimension of [size]. */
fun ShortArray.toTensor(vararg shape: Long): Tensor = Tensor.fromBlob(this, shapeOf(size, shape))

/** This tensor as an [EValue]. */
fun Tensor.toEValue(): EValue = EValue.from(this)

// ---------------------------------------------------------------------------------- modules

/** Runs `forward` on tensors and returns tensors. */
fun Module.forward(vararg inputs: Tensor): Array<Tensor> = execute("forward", *inputs)

/** Runs [method] on tensors and returns tensors. */
fun Module.execute(method: String, vararg inputs: Tensor): Array<Tensor> =
    execute(method, *Array(inputs.size) { EValue.from(inputs[it]) }).map { it.toTensor() }.toTypedArray()

// ---------------------------------------------------------------------------------- LLMs

/** Generates the continuation of [prompt] and returns it as one string. */
fun LlmModule.generateText(prompt: String, config: GenerationConfig = GenerationConfig.defaults()): String {
    val text = StringBuilder()
    generate(prompt, config, LlmCallback { text.append(it) })
    return text.toString()
}

/** One chat turn; returns the whole reply. */
fun LlmModule.chatText(message: String, config: GenerationConfig = GenerationConfig.defaults()): String {
    val text = StringBuilder()
    chat(message, config, LlmCallback { text.append(it) })
    return text.toString()
}

/** An [LlmCallback] from lambdas, for when onStats matters too. */
fun llmCallback(onStats: (LlmStats) -> Unit = {}, onToken: (String) -> Unit): LlmCallback {
    val tokenFn = onToken
    val statsFn = onStats
    return object : LlmCallback {
        override fun onToken(piece: String) = tokenFn(piece)
        override fun onStats(stats: LlmStats) = statsFn(stats)
    }
}
