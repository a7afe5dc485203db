#!/usr/bin/env bash
# Unpacks Debian's arm64 OpenJDK 17 runtime (and the arm64 zlib it links) into DEST, privately:
# nothing is installed. `bindings/java/test.sh --arm64` runs it with qemu-aarch64.
#
#   bindings/java/fetch_arm64_jre.sh DEST     ->  DEST/usr/lib/jvm/java-17-openjdk-arm64/bin/java
#
# apt-get download needs the arm64 package lists: the arm64 dpkg architecture is added (and the
# lists updated) when missing, which needs root (or sudo). The JRE's conf/ links point into
# /etc/java-17-openjdk, which the host's openjdk-17 package provides.
set -euo pipefail
dest=${1:?usage: fetch_arm64_jre.sh DEST}
pkgs=(openjdk-17-jre-headless:arm64 zlib1g:arm64)

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "==> dpkg --add-architecture arm64 && apt-get update"
  $sudo_cmd dpkg --add-architecture arm64
  $sudo_cmd apt-get update -qq
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 777 "$tmp"  # apt-get download writes as the _apt user
echo "==> apt-get download ${pkgs[*]}"
if ! (cd "$tmp" && apt-get download -qq "${pkgs[@]}" 2>/dev/null); then
  # The arm64 lists may be missing or stale (architecture added elsewhere without an update).
  $sudo_cmd apt-get update -qq
  (cd "$tmp" && apt-get download -qq "${pkgs[@]}")
fi
mkdir -p "$dest"
for deb in "$tmp"/*.deb; do
  dpkg-deb -x "$deb" "$dest"
done
test -x "$dest/usr/lib/jvm/java-17-openjdk-arm64/bin/java"
echo "==> arm64 JRE in $dest/usr/lib/jvm/java-17-openjdk-arm64"
