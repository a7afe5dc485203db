#!/usr/bin/env bash
# Builds and tests the Java/Kotlin API (dev.pocket) against the real runtime and the golden
# programs of tests/golden. Ends with the JUnit console summary; exits non-zero on any failure.
#
#   bindings/java/test.sh [BUILD_DIR]           host (default BUILD_DIR build/java)
#   bindings/java/test.sh --arm64 [BUILD_DIR]   linux-aarch64 build, the JUnit tests on Debian's
#                                               arm64 JVM under qemu-aarch64 (default build/java-aarch64)
#
# Steps: CMake builds libpocket.so + libpocket_jni.so; javac compiles the API (--release 8, for
# Android) into pocket.jar and the CLI demo; kotlinc compiles the Kotlin extensions into
# pocket-kotlin.jar and the Kotlin tests, and checks that nullability misuse does not compile;
# the JUnit console launcher runs the Java and Kotlin tests under -Xcheck:jni.
#
# Missing toolchains (javac, java, kotlinc, the JUnit jar; for --arm64 also the cross compiler
# and qemu) skip the run with a message, except under CI=true, where they fail it.
#
# A new BUILD_DIR is configured with the `java` (`java-aarch64`) preset; one that CMake already
# configured keeps its flags (e.g. the lsan-bindings preset's sanitizers). POCKET_JAVA_LAUNCHER, words put before `java` for the JUnit run, runs the tests
# under a wrapper: scripts/lsan_bindings.sh uses `env LD_PRELOAD=libasan.so ...`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/bindings/java

arm64=0
if [ "${1:-}" = "--arm64" ]; then
  arm64=1
  shift
fi
default_build=$root/build/java
[ $arm64 = 1 ] && default_build=$root/build/java-aarch64
build=$(mkdir -p "${1:-$default_build}" && cd "${1:-$default_build}" && pwd)

junit_jar=${JUNIT_JAR:-/usr/share/java/junit-platform-console-standalone.jar}
kotlin_stdlib="/usr/share/java/kotlin-stdlib.jar:/usr/share/java/kotlin-stdlib-jdk7.jar"

missing=()
for tool in cmake ninja javac jar java kotlinc; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
[ -f "$junit_jar" ] || missing+=("$junit_jar (Debian package junit5)")
for jar in ${kotlin_stdlib//:/ }; do
  [ -f "$jar" ] || missing+=("$jar (Debian package kotlin)")
done
if [ $arm64 = 1 ]; then
  for tool in aarch64-linux-gnu-g++ qemu-aarch64 apt-get dpkg-deb; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "bindings/java/test.sh: missing ${missing[*]}" >&2
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: CI=true requires the Java toolchain (scripts/setup.sh --test installs it)" >&2
    exit 1
  fi
  echo "SKIP: Java/Kotlin tests not run (install: default-jdk-headless junit5 kotlin; --arm64 also g++-aarch64-linux-gnu qemu-user)" >&2
  exit 0
fi

java_home=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
quiet_kotlinc() {  # kotlinc 1.3 on JDK 17 warns about -Xverify:none on every run
  kotlinc "$@" 2> >(grep -v -e "Xverify:none" >&2)
}

# ---------------------------------------------------------------- native libraries
echo "==> CMake: libpocket + libpocket_jni in $build"
if [ -f "$build/CMakeCache.txt" ]; then
  # Configured before (by this script's preset, or another's such as lsan-bindings): keep its flags.
  configure=(cmake -B "$build" -DPOCKET_BUILD_JAVA=ON -DJAVA_HOME="$java_home")
else
  preset=java
  [ $arm64 = 1 ] && preset=java-aarch64
  configure=(cmake --preset $preset -B "$build" -DJAVA_HOME="$java_home")
fi
(cd "$root" && "${configure[@]}") >"$build/configure.log" || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target pocket pocket_jni

# ---------------------------------------------------------------- Java and Kotlin
classes=$build/classes
rm -rf "$classes"
mkdir -p "$classes"/{api,android,demo,test,kotlin-test}

echo "==> javac: pocket.jar (--release 8), pocket-android.jar, the CLI demo, the JUnit tests"
javac --release 8 -Xlint:all -Werror -encoding UTF-8 -d "$classes/api" -sourcepath "$here/annotations" \
  $(find "$here/src/main/java" -name '*.java')
# The androidx.annotation stand-ins are compile-only: apps bring the real ones.
(cd "$classes/api" && jar --create --file "$build/pocket.jar" dev)
# The Android source set, against compile-only stand-ins for the two android.* classes it uses.
javac --release 8 -Xlint:all -Werror -encoding UTF-8 -cp "$build/pocket.jar" -d "$classes/android" \
  -sourcepath "$here/annotations:$here/android/stubs" $(find "$here/android/src/main/java" -name '*.java')
(cd "$classes/android" && jar --create --file "$build/pocket-android.jar" dev)
javac --release 8 -Xlint:all -Werror -encoding UTF-8 -cp "$build/pocket.jar" -d "$classes/demo" \
  "$root/demo_apps/cli/java/PocketChat.java"
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -cp "$build/pocket.jar:$junit_jar" -d "$classes/test" \
  $(find "$here/src/test/java" -name '*.java')

echo "==> kotlinc: pocket-kotlin.jar, the Kotlin tests, the nullability check"
quiet_kotlinc -jvm-target 1.8 -Werror -cp "$build/pocket.jar:$kotlin_stdlib" -d "$build/pocket-kotlin.jar" \
  "$here/kotlin/src/main/kotlin"
quiet_kotlinc -jvm-target 1.8 -cp "$build/pocket.jar:$build/pocket-kotlin.jar:$kotlin_stdlib:$junit_jar:$classes/test" \
  -d "$classes/kotlin-test" "$here/kotlin/src/test/kotlin"
nullness_log=$build/nullness.log
if kotlinc -cp "$build/pocket.jar:$kotlin_stdlib" -d "$build/nullness-out" "$here/kotlin/src/nullness" \
  >"$nullness_log" 2>&1; then
  echo "FAIL: kotlinc accepted nullability misuse (kotlin/src/nullness); the annotations do not reach Kotlin" >&2
  exit 1
fi
if [ "$(grep -c ": error: " "$nullness_log")" -ne 2 ]; then
  echo "FAIL: expected exactly 2 nullability errors from kotlinc:" >&2
  cat "$nullness_log" >&2
  exit 1
fi

# ---------------------------------------------------------------- JUnit
cp_all="$build/pocket.jar:$build/pocket-kotlin.jar:$kotlin_stdlib:$classes/demo:$classes/test:$classes/kotlin-test"
read -r -a java_cmd <<<"${POCKET_JAVA_LAUNCHER:-}"
java_cmd+=(java)
junit_filter=()
if [ $arm64 = 1 ]; then
  jre=$build/jre
  if [ ! -x "$jre/usr/lib/jvm/java-17-openjdk-arm64/bin/java" ]; then
    "$here/fetch_arm64_jre.sh" "$jre"
  fi
  export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
  export LD_LIBRARY_PATH="$jre/lib/aarch64-linux-gnu:$jre/usr/lib/aarch64-linux-gnu"
  java_cmd=(qemu-aarch64 -L /usr/aarch64-linux-gnu "$jre/usr/lib/jvm/java-17-openjdk-arm64/bin/java"
    -XX:TieredStopAtLevel=1)
  # A test JVM under qemu-user cannot start another one (no binfmt_misc): leave out the test
  # that runs the CLI demo as a child process; the in-process CLI tests still run.
  junit_filter=(--exclude-tag process)
  echo "==> JUnit on $("${java_cmd[@]}" -XshowSettings:properties -version 2>&1 | grep 'os.arch' | xargs) (qemu-aarch64)"
else
  echo "==> JUnit"
fi
colors=()
[ -t 1 ] || colors=(--disable-ansi-colors)
log=$build/junit.log
set +e
"${java_cmd[@]}" -Xcheck:jni -Dpocket.jni.library="$build/libpocket_jni.so" -Dpocket.golden.dir="$root/tests/golden" \
  -Dpocket.chat.classpath="$cp_all" -jar "$junit_jar" --class-path "$cp_all" \
  --scan-classpath "$classes/test" --scan-classpath "$classes/kotlin-test" --include-classname '.*Test' \
  "${junit_filter[@]}" --fail-if-no-tests --disable-banner --details=tree "${colors[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# -Xcheck:jni only warns (e.g. about leaked local references); treat a warning as a failure.
if grep -q "^WARNING.*JNI\|WARNING in native method" "$log"; then
  echo "FAIL: -Xcheck:jni warnings above" >&2
  exit 1
fi
exit "$status"
