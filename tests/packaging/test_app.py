"""`pocket package --app android|ios`: app projects with the model bundled and Pocket wired in.

Android and iOS apps cannot be built here (no SDK, NDK or Xcode): the release workflow builds
them. These tests check what can be checked: the settings, the model, the artifacts the project
points at, the manifest SwiftPM reads, and the errors.
"""

import json
import os
import subprocess
import sys
import tomllib

import pytest
import yaml

from conftest import GOLDEN, ROOT, need, need_module

from pocket.packaging.render import render


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory):
    """A tiny chat program with the golden ChatML tokenizer embedded (what the apps load)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from random_models import random_llm
    from pocket.llm.models import LlmConfig, export_llm

    tok = open(os.path.join(GOLDEN, "tiny_llm.tokenizer.json"), "rb").read()
    vocab = len(json.loads(tok)["model"]["vocab"])
    config = LlmConfig(vocab_size=vocab, dim=16, n_layers=1, n_heads=2, n_kv_heads=1, hidden_dim=32, head_dim=8,
                       eos_ids=(2,))
    path = str(tmp_path_factory.mktemp("model") / "chat.pocket")
    export_llm(random_llm(config, 16), chat_template="chatml", tokenizer=tok).save(path)
    return path


def _package(*args):
    return subprocess.run([sys.executable, "-m", "pocket", "package", *args], capture_output=True, text=True,
                          timeout=1800)


def test_templates_with_defaults_are_the_demo_files():
    """The demo apps' settings files are the templates rendered with the defaults (no drift)."""
    demo = os.path.join(ROOT, "demo_apps")
    cases = [("app/android/gradle.properties.j2", "android/gradle.properties",
              dict(app_name="Pocket Chat", app_id="dev.pocket.demo.chat", model_file="model.pocket",
                   maven_repo="../../dist/maven")),
             ("app/android/libs.versions.toml.j2", "android/gradle/libs.versions.toml", dict(pocket_version="0.1.0")),
             ("app/ios/project.yml.j2", "ios/project.yml",
              dict(app_name="Pocket Chat", app_id="dev.pocket.demo.chat", model_file="model.pocket",
                   swift_package="../../dist/swift"))]
    for template, committed, values in cases:
        assert render(template, **values) == open(os.path.join(demo, committed)).read(), committed


def test_android_app_project(chat_model, tmp_path):
    for tool in ("cmake", "ninja", "javac", "aarch64-linux-gnu-g++"):
        need(tool)
    need_module("lief")
    out = tmp_path / "TinyChat-android"
    r = _package("--app", "android", chat_model, "--standin", "--targets", "android-arm64-v8a", "--out", str(out),
                 "--app-name", "Tiny Chat", "--app-id", "com.example.tiny")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    props = dict(line.split("=", 1) for line in (out / "gradle.properties").read_text().splitlines()
                 if "=" in line and not line.startswith("#"))
    assert props["pocketAppName"] == "Tiny Chat" and props["pocketAppId"] == "com.example.tiny"
    asset = out / "app" / "src" / "main" / "assets" / props["pocketModelAsset"]
    assert asset.read_bytes() == open(chat_model, "rb").read()
    version = tomllib.loads((out / "gradle" / "libs.versions.toml").read_text())["versions"]["pocket"]
    assert version == "0.1.0-standin"  # a stand-in AAR is never mistaken for the release
    repo = out / props["pocketMavenRepo"]
    pom = repo / "dev" / "pocket" / "pocket-android" / version / f"pocket-android-{version}.pom"
    assert pom.is_file() and "<artifactId>pocket-android</artifactId>" in pom.read_text()
    assert (pom.parent / f"pocket-android-{version}.aar").is_file()
    build = (out / "app" / "build.gradle.kts").read_text()
    assert 'noCompress += "pocket"' in build and "libs.pocket.android" in build
    assert (out / "settings.gradle.kts").is_file() and (out / "chat-core" / "build.gradle.kts").is_file()
    # The release workflow's emulator run (connectedDebugAndroidTest) needs the instrumented tests.
    assert (out / "app/src/androidTest/kotlin/dev/pocket/demo/chat/ChatAppTest.kt").is_file()
    assert "testInstrumentationRunner" in build and "ui.test.junit4" in build


def test_ios_app_project(chat_model, tmp_path):
    need("swift")
    need_module("ziglang")
    need_module("lief")
    out = tmp_path / "TinyChat-ios"
    r = _package("--app", "ios", chat_model, "--standin", "--targets", "ios-arm64", "--out", str(out),
                 "--app-id", "com.example.tiny")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    spec = yaml.safe_load((out / "project.yml").read_text())
    assert spec["settings"]["base"]["PRODUCT_BUNDLE_IDENTIFIER"] == "com.example.tiny"
    model = spec["settings"]["base"]["POCKET_MODEL_FILE"]
    assert (out / "Resources" / model).read_bytes() == open(chat_model, "rb").read()
    package = out / spec["packages"]["Pocket"]["path"]
    assert (package / "Package.swift").is_file()
    r = subprocess.run(["swift", "package", "dump-package"], cwd=package, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    entitlements = spec["targets"]["PocketChat"]["entitlements"]["properties"]
    assert entitlements["com.apple.developer.kernel.increased-memory-limit"] is True


def test_app_errors(chat_model, tmp_path):
    r = _package("--app", "android", os.path.join(GOLDEN, "mlp.pocket"), "--standin", "--out", str(tmp_path / "a"))
    assert r.returncode == 1 and "not a chat model" in r.stderr
    r = _package("--app", "android", os.path.join(GOLDEN, "tiny_llm.pocket"), "--standin", "--out", str(tmp_path / "b"))
    assert r.returncode == 1 and "carries no tokenizer" in r.stderr
    r = _package("--app", "android", chat_model, "--app-id", "not an id", "--standin", "--out", str(tmp_path / "c"))
    assert r.returncode == 1 and "--app-id" in r.stderr
    r = _package("--app", "ios", chat_model, chat_model, "--out", str(tmp_path / "d"))
    assert r.returncode == 1 and "exactly one model" in r.stderr
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "x.txt").write_text("mine")
    r = _package("--app", "android", chat_model, "--standin", "--out", str(keep))
    assert r.returncode == 1 and "not empty" in r.stderr and (keep / "x.txt").read_text() == "mine"
    r = _package("--app", "android", chat_model, "--out", str(tmp_path / "e"))
    assert r.returncode == 1 and "ANDROID_NDK" in r.stderr and not (tmp_path / "e").exists()
