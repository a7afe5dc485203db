"""`pocket package --app android|ios MODEL.pocket --out DIR`: a chat app project with the model
bundled and the Pocket artifacts wired in, ready for Android Studio or Xcode.

The project is the demo app (demo_apps/android or demo_apps/ios) with its one place of settings
rendered from templates/app (app name, app id, model file, where Pocket comes from), the model
placed as an asset/resource, and `pocket package`'s output for the platform in DIR/pocket-dist.
Android stores the model uncompressed (`noCompress += "pocket"`), so it is mapped from the APK.
iOS ships the demo's committed PocketChat.xcodeproj (generated from project.yml by XcodeGen, so
users need no XcodeGen): its settings are Config/App.xcconfig, and the one path that differs, the
Pocket Swift package's, is rewritten in the pbxproj and in project.yml.
"""

from __future__ import annotations

import os
import re
import shutil

from .errors import PackageError
from .render import render

DEFAULTS = {"android": ("Pocket Chat", "dev.pocket.demo.chat"), "ios": ("Pocket Chat", "dev.pocket.demo.chat")}
MODEL_FILE = "model.pocket"
_APP_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$")
_APP_NAME = re.compile(r"^[\w][\w .'-]{0,49}$")
# Build outputs and host-only test scripts of the demo that an app project does not need.
_SKIP = shutil.ignore_patterns(".gradle", "build", ".build", "xcuserdata", "test.sh", "model.pocket")
# Where the demo's project finds the Pocket Swift package (written by `pocket package --out dist`).
IOS_DEMO_PACKAGE = "../../dist/swift"
IOS_PROJECT = "PocketChat.xcodeproj/project.pbxproj"


def check_model(model: str) -> dict:
    """The program's description; PackageError unless it is an LLM program the chat app can run."""
    from pocket.describe import describe

    if not os.path.isfile(model):
        raise PackageError(f"no model file {model}")
    try:
        info = describe(model)
    except Exception as e:
        raise PackageError(f"{model} is not a valid .pocket program: {e}") from e
    meta = info.get("metadata", {})
    if "max_seq_len" not in meta or not {"prefill", "decode"} <= set(info["methods"]):
        raise PackageError(f"{model} is not a chat model (no prefill/decode methods or max_seq_len metadata): "
                           "export one with `pocket llm export`")
    if not info.get("tokenizer_bytes"):
        raise PackageError(f"{model} carries no tokenizer: export it with `pocket llm export`, which embeds one")
    return info


def values(kind: str, app_name: str | None, app_id: str | None) -> tuple[str, str]:
    name, ident = app_name or DEFAULTS[kind][0], app_id or DEFAULTS[kind][1]
    if not _APP_NAME.match(name):
        raise PackageError(f"--app-name {name!r}: use letters, digits, spaces and . ' - (at most 50)")
    if not _APP_ID.match(ident):
        raise PackageError(f"--app-id {ident!r}: expected a reverse-DNS id such as com.example.chat")
    return name, ident


def render_project(root: str, kind: str, model: str, out: str, app_name: str, app_id: str,
                   dist: str, pocket_version: str) -> str:
    """Copies the demo app into `out` and fills in its settings; `dist` is pocket package's output."""
    src = os.path.join(root, "demo_apps", kind)
    shutil.copytree(src, out, ignore=_SKIP, symlinks=False, dirs_exist_ok=True)
    rel = os.path.relpath(dist, out)
    if kind == "android":
        with open(os.path.join(out, "gradle.properties"), "w") as f:
            f.write(render("app/android/gradle.properties.j2", app_name=app_name, app_id=app_id,
                           model_file=MODEL_FILE, maven_repo=os.path.join(rel, "maven")))
        with open(os.path.join(out, "gradle", "libs.versions.toml"), "w") as f:
            f.write(render("app/android/libs.versions.toml.j2", pocket_version=pocket_version))
        assets = os.path.join(out, "app", "src", "main", "assets")
    else:
        with open(os.path.join(out, "Config", "App.xcconfig"), "w") as f:
            f.write(render("app/ios/App.xcconfig.j2", app_name=app_name, app_id=app_id, model_file=MODEL_FILE))
        package = os.path.join(rel, "swift")
        _rewrite(os.path.join(out, IOS_PROJECT), pbxproj_package_path, package)
        _rewrite(os.path.join(out, "project.yml"), spec_package_path, package)
        assets = os.path.join(out, "Resources")
    os.makedirs(assets, exist_ok=True)
    shutil.copyfile(model, os.path.join(assets, MODEL_FILE))
    return out


def _rewrite(path: str, change, package: str) -> None:
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(change(text, package))


def _pbx_string(s: str) -> str:
    """`s` as an old-style plist string: bare if it is made of the characters Xcode leaves bare."""
    if re.fullmatch(r"[A-Za-z0-9_$./]+", s) and "//" not in s and "___" not in s:
        return s
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def pbxproj_package_path(text: str, package: str) -> str:
    """The demo's pbxproj pointing at the Pocket package in `package` (relative to the project folder).

    XcodeGen writes the demo's path in two entries, the package reference (`relativePath`) and the
    folder shown in the navigator (`path`), plus comments that repeat it; all of them change. A
    project generated differently (a path missing, or twice) is an error, not a silent half-edit.
    """
    for key in ("relativePath", "path"):
        entry = re.compile(rf"(\s{key} = ){re.escape(IOS_DEMO_PACKAGE)};")
        n = len(entry.findall(text))
        if n != 1:
            raise PackageError(f"{IOS_PROJECT}: expected one `{key} = {IOS_DEMO_PACKAGE};`, found {n}: "
                               "regenerate it from project.yml (see demo_apps/ios/README.md)")
        text = entry.sub(lambda m: m.group(1) + _pbx_string(package) + ";", text)
    return text.replace(IOS_DEMO_PACKAGE, package)  # the comments


def spec_package_path(text: str, package: str) -> str:
    """project.yml (the XcodeGen spec the pbxproj comes from) with the same package path."""
    entry = re.compile(rf"^(    path: ){re.escape(IOS_DEMO_PACKAGE)}(\s)", re.M)
    text, n = entry.subn(lambda m: m.group(1) + package + m.group(2), text)
    if n != 1:
        raise PackageError(f"project.yml: expected one Pocket package `path: {IOS_DEMO_PACKAGE}`, found {n}")
    return text
