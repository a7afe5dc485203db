#!/usr/bin/env bash
# Builds the Android chat app's logic (chat-core: ChatSession, TokenFlow, ModelFiles; Kotlin, no
# Android types) with Debian's kotlinc and runs its JUnit tests (src/hostTest: a folder Gradle
# does not know, since they need the host's libpocket_jni) on this JVM against the real runtime
# and the golden tiny LLM.
#
#   demo_apps/android/chat-core/test.sh [BUILD_DIR]
#
# BUILD_DIR is where bindings/java/test.sh built pocket.jar and libpocket_jni.so (default
# build/java); they are built first when missing. Missing toolchains (kotlinc, java, the JUnit
# and kotlinx-coroutines jars) skip the run with a message, except under CI=true.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$(mkdir -p "${1:-$root/build/java}" && cd "${1:-$root/build/java}" && pwd)

junit_jar=${JUNIT_JAR:-/usr/share/java/junit-platform-console-standalone.jar}
# Debian's libkotlinx-coroutines-java (1.0.1) and, at run time, the atomicfu it was built against.
coroutines_jar=/usr/share/java/kotlinx-coroutines-core.jar
atomicfu_jar=/usr/share/java/atomicfu.jar
kotlin_stdlib="/usr/share/java/kotlin-stdlib.jar:/usr/share/java/kotlin-stdlib-jdk7.jar"
missing=()
for tool in kotlinc java; do command -v "$tool" >/dev/null || missing+=("$tool"); done
for jar in "$junit_jar" "$coroutines_jar" "$atomicfu_jar" ${kotlin_stdlib//:/ }; do [ -f "$jar" ] || missing+=("$jar"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "chat-core/test.sh: missing ${missing[*]}" >&2
  [ "${CI:-}" = "true" ] && { echo "FAIL: CI=true requires them (scripts/setup.sh --test)" >&2; exit 1; }
  echo "SKIP: chat-core tests not run (install: kotlin junit5 libkotlinx-coroutines-java libkotlinx-atomicfu-java)" >&2
  exit 0
fi
if [ ! -f "$build/pocket.jar" ] || [ ! -f "$build/libpocket_jni.so" ]; then
  echo "==> no pocket.jar/libpocket_jni.so in $build: bindings/java/test.sh builds them"
  "$root/bindings/java/test.sh" "$build" >/dev/null
fi

quiet_kotlinc() {  # kotlinc 1.3 on JDK 17 warns about -Xverify:none on every run
  kotlinc "$@" 2> >(grep -v -e "Xverify:none" >&2)
}
out=$build/chat-core
rm -rf "$out" && mkdir -p "$out"
cp="$build/pocket.jar:$coroutines_jar:$kotlin_stdlib"
echo "==> kotlinc: chat-core.jar and its tests"
quiet_kotlinc -jvm-target 1.8 -Werror -cp "$cp" -d "$out/chat-core.jar" "$here/src/main/kotlin"
quiet_kotlinc -jvm-target 1.8 -cp "$cp:$out/chat-core.jar:$junit_jar" -d "$out/test" "$here/src/hostTest/kotlin"

echo "==> JUnit (chat-core)"
colors=()
[ -t 1 ] || colors=(--disable-ansi-colors)
java -Xcheck:jni -Dpocket.jni.library="$build/libpocket_jni.so" -Dpocket.golden.dir="$root/tests/golden" \
  -jar "$junit_jar" --class-path "$cp:$atomicfu_jar:$out/chat-core.jar:$out/test" --scan-classpath "$out/test" \
  --fail-if-no-tests --disable-banner --details=tree "${colors[@]}"
