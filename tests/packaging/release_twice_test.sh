#!/usr/bin/env bash
# Runs scripts/release twice on the same build and checks that the two archives are the same
# bytes, that SHA256SUMS names the archive with its digest, and what the archive holds.
# Usage: release_twice_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1
build_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$source_dir/scripts/release" --build-dir "$build_dir" --no-build --out "$work/one" >/dev/null
sleep 1 # a different second: a timestamp that leaked into the archive would show
"$source_dir/scripts/release" --build-dir "$build_dir" --no-build --out "$work/two" >/dev/null

archive=$(cd "$work/one" && ls lume-unlock-*-*-*.tar.gz)
case "$archive" in
  lume-unlock-[0-9]*.[0-9]*.[0-9]*-"$(uname -s | tr '[:upper:]' '[:lower:]')"-"$(uname -m)".tar.gz) ;;
  *) echo "FAIL: unexpected archive name $archive"; exit 1 ;;
esac
cmp "$work/one/$archive" "$work/two/$archive" || { echo "FAIL: two release runs differ"; exit 1; }
cmp "$work/one/SHA256SUMS" "$work/two/SHA256SUMS"
(cd "$work/one" && sha256sum -c SHA256SUMS)

listing=$(tar tvzf "$work/one/$archive")
top=${archive%.tar.gz}
for wanted in bin/lume-unlock share/lume-unlock/shim-bundle/bundle.json \
  share/lume-unlock/image-recipes/tahoe-llm.yaml share/doc/lume-unlock/README.md \
  share/doc/lume-unlock/report.schema.json \
  share/bash-completion/completions/lume-unlock share/zsh/site-functions/_lume-unlock; do
  grep -q " $top/$wanted\$" <<<"$listing" || { echo "FAIL: $wanted missing from $archive"; exit 1; }
done
if grep -E 'lume-sim|guest-sim|_test|bench|fixtures' <<<"$listing"; then
  echo "FAIL: test-only files in $archive"
  exit 1
fi
if grep -v ' 0/0 ' <<<"$listing" | grep -q .; then echo "FAIL: an owner other than 0/0"; exit 1; fi
if grep -v ' 1970-01-01 00:00 ' <<<"$listing" | grep -q .; then echo "FAIL: an mtime other than 0"; exit 1; fi
echo "ok: $archive is the same $(wc -c <"$work/one/$archive") bytes twice; $(wc -l <<<"$listing") entries"
