#!/usr/bin/env bash
# Structural check of the cross-built macOS arm64 shim (DESIGN §4.3): file type, architecture,
# install name, the __interpose section bound to Metal's two creation functions, load commands.
# Usage: check_darwin_dylib.sh LLVM_OBJDUMP DYLIB
set -euo pipefail
objdump=$1
dylib=$2
fail() { # The same policy code as the Linux .so: its C interface is linked in.
symbols=$("$objdump" --syms "$dylib")
for sym in _lume_unlock_policy_decide _lume_unlock_policy_family_forced_true _lume_unlock_hooks_install_for_class; do
  grep -q " $sym\$" <<<"$symbols" || fail "$sym is missing"
done
echo "check_darwin_dylib: $*" >&2; exit 1; }
[ -f "$dylib" ] || fail "\"$dylib\" does not exist"

header=$("$objdump" --macho --private-header "$dylib")
grep -Eq 'MH_MAGIC_64 +ARM64 +ALL .* DYLIB ' <<<"$header" || fail "not an arm64 MH_DYLIB: $header"

commands=$("$objdump" --macho --private-headers "$dylib")
grep -A2 'cmd LC_ID_DYLIB' <<<"$commands" | grep -q 'name @rpath/liblume-unlock-shim.dylib ' ||
  fail "install name is not @rpath/liblume-unlock-shim.dylib"
for lib in /usr/lib/libobjc.A.dylib /usr/lib/libSystem.B.dylib /System/Library/Frameworks/Metal.framework/Versions/A/Metal; do
  grep -A2 'cmd LC_LOAD_DYLIB' <<<"$commands" | grep -q "name $lib " || fail "no LC_LOAD_DYLIB for $lib"
done
grep -A4 'cmd LC_BUILD_VERSION' <<<"$commands" | grep -q 'minos 13.0' || fail "minimum macOS is not 13.0"

"$objdump" --macho --section-headers "$dylib" | grep -q ' __interpose ' || fail "no __interpose section"
binds=$("$objdump" --macho --dyld-info "$dylib")
for fn in _MTLCreateSystemDefaultDevice _MTLCopyAllDevices; do
  grep -Eq "^__DATA +__interpose .* bind .* Metal +$fn\$" <<<"$binds" || fail "__interpose does not bind Metal $fn"
done
[ "$(grep -Ec '^__DATA +__interpose .* rebase ' <<<"$binds")" -eq 2 ] || fail "__interpose lacks its two replacements"

"$objdump" --macho --exports-trie "$dylib" | grep -q '_lume_unlock_shim_state' || fail "lume_unlock_shim_state is not exported"
# The same policy code as the Linux .so: its C interface is linked in.
symbols=$("$objdump" --syms "$dylib")
for sym in _lume_unlock_policy_decide _lume_unlock_policy_family_forced_true _lume_unlock_hooks_install_for_class; do
  grep -q " $sym\$" <<<"$symbols" || fail "$sym is missing"
done
echo "check_darwin_dylib: $dylib is an arm64 dylib interposing Metal's creation functions"
