"""Android and JVM artifacts: the AAR, the desktop jar, the Kotlin extensions, a Maven repository.

    dist/pocket-android-<v>.aar        AndroidManifest.xml, classes.jar (dev.pocket + the Android
                                       layer, Java 8 bytecode, no android.* classes), proguard.txt
                                       (consumer rules), R.txt, jni/<abi>/libpocket{,_jni}.so
    dist/pocket-java-<v>.jar           dev.pocket for desktop JVMs, with the Linux libraries inside
                                       (dev/pocket/native/linux-<arch>/), loaded from the jar
    dist/pocket-kotlin-<v>.jar         the Kotlin extensions (needs kotlin-stdlib)
    dist/maven/dev/pocket/<artifact>/<v>/...   POM, Gradle module metadata, .sha1/.md5 of each file

An AAR holding stand-in libraries is versioned `<v>-standin` everywhere, so no build that asks
for `dev.pocket:pocket-android:<v>` can pick it up by mistake.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import time
import zipfile

from .errors import PackageError
from .render import render

GROUP = "dev.pocket"
KOTLIN_STDLIB = ("/usr/share/java/kotlin-stdlib.jar",)


def _java(root):
    return os.path.join(root, "bindings", "java")


def _javac(args, what):
    if not shutil.which("javac"):
        raise PackageError(f"{what}: javac not found (install a JDK, e.g. openjdk-17-jdk-headless)")
    r = subprocess.run(["javac", "--release", "8", "-encoding", "UTF-8", "-nowarn", *args],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise PackageError(f"{what}: javac failed:\n{r.stderr[-3000:]}")


def _sources(folder):
    return sorted(glob.glob(os.path.join(folder, "**", "*.java"), recursive=True))


def _zip_dir(folder, zf, prefix=""):
    for dirpath, _, files in sorted(os.walk(folder)):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            zf.write(path, prefix + os.path.relpath(path, folder))


def compile_classes(root: str, work: str) -> tuple[str, str]:
    """javac --release 8: (API classes dir, Android layer classes dir)."""
    java = _java(root)
    api = os.path.join(work, "classes-api")
    android = os.path.join(work, "classes-android")
    for d in (api, android):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    # The androidx annotations and android.* stand-ins are compile-only: never in a jar.
    _javac(["-d", api, "-sourcepath", os.path.join(java, "annotations"),
            *_sources(os.path.join(java, "src", "main", "java"))], "dev.pocket classes")
    _javac(["-d", android, "-cp", api, "-sourcepath",
            os.path.join(java, "annotations") + os.pathsep + os.path.join(java, "android", "stubs"),
            *_sources(os.path.join(java, "android", "src", "main", "java"))], "dev.pocket.android classes")
    for stub in ("android", "androidx"):  # javac writes classes of -sourcepath files it compiled
        for d in (api, android):
            shutil.rmtree(os.path.join(d, stub), ignore_errors=True)
    return api, android


def write_jar(path: str, folders: list[str], extra: dict | None = None) -> str:
    """A jar of the class folders plus extra {name in jar: file}."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nCreated-By: pocket package\r\n\r\n")
        for folder in folders:
            _zip_dir(folder, zf)
        for name, src in sorted((extra or {}).items()):
            zf.write(src, name)
    return path


def write_aar(root: str, path: str, classes_jar: str, libs_by_abi: dict) -> str:
    """libs_by_abi: {"arm64-v8a": {"libpocket.so": path, "libpocket_jni.so": path}, ...}."""
    android = os.path.join(_java(root), "android")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(os.path.join(android, "src", "main", "AndroidManifest.xml"), "AndroidManifest.xml")
        zf.write(classes_jar, "classes.jar")
        zf.write(os.path.join(android, "proguard.txt"), "proguard.txt")
        zf.writestr("R.txt", "")  # no resources
        for abi, libs in sorted(libs_by_abi.items()):
            for name in ("libpocket.so", "libpocket_jni.so"):
                zf.write(libs[name], f"jni/{abi}/{name}")
    return path


def kotlin_jar(root: str, api_classes: str, path: str) -> str | None:
    """The Kotlin extensions (kotlinc, JVM 1.8); None when kotlinc is missing."""
    if not shutil.which("kotlinc"):
        return None
    src = os.path.join(_java(root), "kotlin", "src", "main", "kotlin")
    cp = os.pathsep.join([api_classes, *[j for j in KOTLIN_STDLIB if os.path.exists(j)]])
    r = subprocess.run(["kotlinc", "-jvm-target", "1.8", "-cp", cp, "-d", path, src], capture_output=True, text=True)
    if r.returncode != 0:
        raise PackageError(f"pocket-kotlin: kotlinc failed:\n{r.stderr[-3000:]}")
    return path


# ------------------------------------------------------------------ Maven repository

def _checksums(path):
    data = open(path, "rb").read()
    for algo in ("sha1", "md5", "sha256"):
        with open(f"{path}.{algo}", "w") as f:
            f.write(hashlib.new(algo, data).hexdigest())


def _module_json(artifact, version, file_path, packaging, dependencies):
    """Gradle module metadata (format 1.1): one API and one runtime variant of the one file."""
    data = open(file_path, "rb").read()
    entry = {"name": os.path.basename(file_path), "url": os.path.basename(file_path), "size": len(data),
             "sha512": hashlib.sha512(data).hexdigest(), "sha256": hashlib.sha256(data).hexdigest(),
             "sha1": hashlib.sha1(data).hexdigest(), "md5": hashlib.md5(data).hexdigest()}
    deps = [{"group": d["group"], "module": d["artifact"], "version": {"requires": d["version"]}}
            for d in dependencies]
    variants = []
    for usage in ("api", "runtime"):
        variants.append({
            "name": f"release{usage.capitalize()}Elements" if packaging == "aar" else f"{usage}Elements",
            "attributes": {"org.gradle.category": "library", "org.gradle.dependency.bundling": "external",
                           "org.gradle.libraryelements": packaging, "org.gradle.usage": f"java-{usage}",
                           **({"org.gradle.jvm.version": 8} if packaging == "jar" else {})},
            **({"dependencies": deps} if deps else {}),
            "files": [entry]})
    return {"formatVersion": "1.1", "component": {"group": GROUP, "module": artifact, "version": version},
            "createdBy": {"pocket": {"version": version}}, "variants": variants}


def publish(repo: str, artifact: str, version: str, file_path: str, packaging: str, description: str,
            standin: bool = False, dependencies: list | None = None) -> str:
    """Copies file_path into the Maven layout with its POM, module metadata and checksums."""
    dependencies = dependencies or []
    folder = os.path.join(repo, *GROUP.split("."), artifact, version)
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, f"{artifact}-{version}")
    target = f"{base}.{packaging}"
    shutil.copyfile(file_path, target)
    with open(f"{base}.pom", "w") as f:
        f.write(render("pom.xml.j2", group=GROUP, artifact=artifact, version=version, packaging=packaging,
                       name=artifact, description=description, standin=standin, dependencies=dependencies))
    with open(f"{base}.module", "w") as f:
        json.dump(_module_json(artifact, version, target, packaging, dependencies), f, indent=2)
    for p in (target, f"{base}.pom", f"{base}.module"):
        _checksums(p)
    parent = os.path.dirname(folder)
    versions = sorted(d for d in os.listdir(parent) if os.path.isdir(os.path.join(parent, d)))
    meta = os.path.join(parent, "maven-metadata.xml")
    with open(meta, "w") as f:
        f.write(render("maven-metadata.xml.j2", group=GROUP, artifact=artifact, versions=versions,
                       updated=time.strftime("%Y%m%d%H%M%S", time.gmtime())))
    _checksums(meta)
    return folder


def build_all(root: str, out: str, version: str, android_builds: list, linux_builds: list, work: str,
              say=print) -> list[dict]:
    """Writes the jars, the AAR (when android_builds) and the Maven repository; returns manifest entries."""
    entries = []
    api, android = compile_classes(root, work)
    repo = os.path.join(out, "maven")
    java_natives = {}
    for b in linux_builds:
        for name in ("libpocket.so", "libpocket_jni.so"):
            java_natives[f"dev/pocket/native/{b.target}/{name}"] = b.libs[name]
    java_jar = write_jar(os.path.join(out, f"pocket-java-{version}.jar"), [api], java_natives)
    publish(repo, "pocket-java", version, java_jar, "jar",
            "Pocket for desktop JVMs: dev.pocket with its Linux native libraries inside")
    entries.append({"kind": "jar", "path": java_jar, "targets": [b.target for b in linux_builds], "standin": False})
    kt = kotlin_jar(root, api, os.path.join(out, f"pocket-kotlin-{version}.jar"))
    if kt:
        publish(repo, "pocket-kotlin", version, kt, "jar",
                "Kotlin extensions of dev.pocket (use with pocket-android or pocket-java)",
                dependencies=[{"group": "org.jetbrains.kotlin", "artifact": "kotlin-stdlib",
                               "version": "1.3.31", "scope": "compile"}])
        entries.append({"kind": "jar", "path": kt, "targets": [], "standin": False})
    else:
        say("  pocket-kotlin: skipped (kotlinc not found)")
    if android_builds:
        standin = any(b.standin for b in android_builds)
        v = version + ("-standin" if standin else "")
        classes = write_jar(os.path.join(work, "classes.jar"), [api, android])
        aar = write_aar(root, os.path.join(out, f"pocket-android-{v}.aar"), classes,
                        {b.abi: b.libs for b in android_builds})
        publish(repo, "pocket-android", v, aar, "aar",
                "Pocket for Android: run .pocket programs and chat models on device", standin=standin)
        entries.append({"kind": "aar", "path": aar, "targets": [b.target for b in android_builds],
                        "standin": standin})
    entries.append({"kind": "maven-repo", "path": repo,
                    "targets": sorted({t for e in entries for t in e["targets"]}),
                    "standin": any(e["standin"] for e in entries)})
    return entries
