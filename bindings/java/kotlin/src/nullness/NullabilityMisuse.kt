// Must NOT compile: test.sh checks that kotlinc rejects each marked line, which shows the Java
// API's nullability annotations reach Kotlin as real (non-platform) types.
package dev.pocket

fun nullableReturnUsedAsNonNull(m: Module): String {
    val value: String = m.getMetadata("key")  // error: getMetadata(key) is @Nullable
    return value
}

fun nullPassedForNonNull() {
    Module.load(null as String?)  // error: path is @NonNull
}
