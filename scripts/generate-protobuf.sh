#!/usr/bin/env bash
# Regenerates the Swift code of the protobuf batch encoding from proto/waymark_batch.proto into
# Sources/WaymarkProtobuf/Generated/. The generated file is committed: building and testing
# Waymark (and CI) never need protoc or the plugin; only a change to the .proto does.
#
#   scripts/generate-protobuf.sh            regenerate (then build, test and commit both files)
#   scripts/generate-protobuf.sh --check    regenerate into a temporary folder and compare
#
# Versions used for the committed code:
#   protoc            libprotoc 3.21.12 (Debian 12's protobuf-compiler: apt-get install -y protobuf-compiler)
#   protoc-gen-swift  1.39.0, built from apple/swift-protobuf at tag 1.39.0 — the same version as
#                     the SwiftProtobuf library in Package.swift (generated code and runtime must match)
#
# The plugin is found as $PROTOC_GEN_SWIFT, else on PATH, else in $WAYMARK_PROTOC_GEN_SWIFT_DIR
# (default /tmp/waymark-protoc-gen-swift), where it is built once on first use (about 10 minutes
# on 2 cores; outside the repository). On a shared machine run this under
# `flock /tmp/waymark-heavy.lock`.
set -euo pipefail
cd "$(dirname "$0")/.."

want_protoc="libprotoc 3.21.12"
plugin_version=1.39.0
out=Sources/WaymarkProtobuf/Generated
check=false
if [[ ${1:-} == --check ]]; then check=true; fi

command -v protoc >/dev/null || { echo "protoc is missing: apt-get install -y protobuf-compiler" >&2; exit 1; }
have_protoc=$(protoc --version)
if [[ $have_protoc != "$want_protoc" ]]; then
  echo "note: $have_protoc, the committed code was generated with $want_protoc (the output may differ in comments only; review the diff)" >&2
fi

plugin=${PROTOC_GEN_SWIFT:-$(command -v protoc-gen-swift || true)}
if [[ -z $plugin ]]; then
  dir=${WAYMARK_PROTOC_GEN_SWIFT_DIR:-/tmp/waymark-protoc-gen-swift}
  plugin=$dir/swift-protobuf/.build/release/protoc-gen-swift
  if [[ ! -x $plugin ]]; then
    echo "building protoc-gen-swift $plugin_version in $dir (once; about 10 minutes)" >&2
    mkdir -p "$dir"
    [[ -d $dir/swift-protobuf ]] || git clone -q https://github.com/apple/swift-protobuf "$dir/swift-protobuf"
    git -C "$dir/swift-protobuf" checkout -q "$plugin_version"
    (cd "$dir/swift-protobuf" && swift build -c release --product protoc-gen-swift >/dev/null)
  fi
fi
have_plugin=$("$plugin" --version)
if [[ $have_plugin != *"$plugin_version"* ]]; then
  echo "protoc-gen-swift is '$have_plugin', not $plugin_version (the SwiftProtobuf version in Package.swift)" >&2
  exit 1
fi

target=$out
if $check; then target=$(mktemp -d); trap 'rm -rf "$target"' EXIT; fi
mkdir -p "$target"
protoc --plugin=protoc-gen-swift="$plugin" --proto_path=proto \
  --swift_out="$target" --swift_opt=Visibility=Public,FileNaming=FullPath \
  proto/waymark_batch.proto
echo "generated with $have_protoc and $have_plugin" >&2
if $check; then
  diff -u "$out/waymark_batch.pb.swift" "$target/waymark_batch.pb.swift" && echo "up to date" >&2
fi
