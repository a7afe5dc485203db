"""dist/manifest.json: what was built, from which commit, and the sha256 and size of each file.

    {"version": "0.1.0", "commit": "<git sha>", "standin": false, "selective_ops": [...] | null,
     "artifacts": [{"kind", "path", "sha256", "bytes", "targets", "standin", ...}, ...]}

Kinds: aar, maven-repo, jar, xcframework-zip, swift-package, wheel, native-lib (per target, with
its stripped size and exported symbols). Paths are relative to the manifest; a folder's sha256 is
that of its files' relative paths and sha256s, sorted.
"""

from __future__ import annotations

import hashlib
import json
import os


def _file_sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def digest(path: str) -> tuple[str, int]:
    """(sha256, bytes) of a file, or of a folder's files (relative path + sha256, sorted)."""
    if os.path.isfile(path):
        return _file_sha(path), os.path.getsize(path)
    lines, total = [], 0
    for dirpath, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(dirpath, name)
            lines.append(f"{os.path.relpath(full, path)}\t{_file_sha(full)}\n")
            total += os.path.getsize(full)
    return hashlib.sha256("".join(sorted(lines)).encode()).hexdigest(), total


def write(out: str, version: str, commit: str, ops, entries: list[dict]) -> str:
    artifacts = []
    for e in entries:
        sha, size = digest(e["path"])
        artifacts.append({**e, "path": os.path.relpath(e["path"], out), "sha256": sha, "bytes": size})
    data = {"version": version, "commit": commit, "standin": any(a["standin"] for a in artifacts),
            "selective_ops": ops, "artifacts": artifacts}
    path = os.path.join(out, "manifest.json")
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    return path


def verify(manifest_path: str) -> list[str]:
    """Problems: a listed file missing, or its size or sha256 different from the manifest's."""
    base = os.path.dirname(os.path.abspath(manifest_path))
    with open(manifest_path) as f:
        data = json.load(f)
    problems = []
    for a in data["artifacts"]:
        path = os.path.join(base, a["path"])
        if not os.path.exists(path):
            problems.append(f"{a['path']}: listed in the manifest but missing")
            continue
        sha, size = digest(path)
        if size != a["bytes"]:
            problems.append(f"{a['path']}: {size} bytes, manifest says {a['bytes']}")
        if sha != a["sha256"]:
            problems.append(f"{a['path']}: sha256 {sha[:12]}..., manifest says {a['sha256'][:12]}...")
    return problems
