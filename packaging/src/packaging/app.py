"""`pocket package --app android|ios MODEL.pocket --out DIR`: a chat app project with the model
bundled and the Pocket artifacts wired in, ready for Android Studio or Xcode.

The project is the demo app (demo_apps/android or demo_apps/ios) with its one place of settings
rendered from templates/app (app name, app id, model file, where Pocket comes from), the model
placed as an asset/resource, and `pocket package`'s output for the platform in DIR/pocket-dist.
Android stores the model uncompressed (`noCompress += "pocket"`), so it is mapped from the APK.
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
_SKIP = shutil.ignore_patterns(".gradle", "build", ".build", "*.xcodeproj", "test.sh", "model.pocket")


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
        with open(os.path.join(out, "project.yml"), "w") as f:
            f.write(render("app/ios/project.yml.j2", app_name=app_name, app_id=app_id, model_file=MODEL_FILE,
                           swift_package=os.path.join(rel, "swift")))
        assets = os.path.join(out, "Resources")
    os.makedirs(assets, exist_ok=True)
    shutil.copyfile(model, os.path.join(assets, MODEL_FILE))
    return out
