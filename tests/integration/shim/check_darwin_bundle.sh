#!/usr/bin/env bash
# Structural check of the darwin-arm64 entry of a built shim bundle (DESIGN §4.3, §4.5), without a
# Mac: bundle.json names a shim and a probe for darwin-arm64 and lists their slices (arm64); the
# shim is an arm64 dylib whose one entry point is its constructor swapping
# -[_MTLDevice initGPUFamilySupport] (no __interpose section, no C function hooked, no dyld image
# callback: DESIGN §4.2); the probe
# is an arm64 executable that links Metal.framework and libobjc; both carry LC_CODE_SIGNATURE
# (arm64 macOS runs nothing unsigned) and ask for macOS 13.0.
# Usage: check_darwin_bundle.sh LLVM_OBJDUMP BUNDLE_DIR
set -euo pipefail
objdump=$1
bundle=$2
fail() {
  echo "check_darwin_bundle: $*" >&2
  exit 1
}
[ -f "$bundle/bundle.json" ] || fail "\"$bundle/bundle.json\" does not exist"

# The paths bundle.json gives the darwin-arm64 shim and probe ("" when absent).
entry_path() {
  python3 -c 'import json,sys
entry = json.load(open(sys.argv[1]))["platforms"].get("darwin-arm64", {})
print(entry.get(sys.argv[2], {}).get("path", ""))' "$bundle/bundle.json" "$1"
}
# The slices bundle.json lists for a darwin-arm64 file, space separated.
entry_slices() {
  python3 -c 'import json,sys
entry = json.load(open(sys.argv[1]))["platforms"].get("darwin-arm64", {})
print(" ".join(entry.get(sys.argv[2], {}).get("slices", [])))' "$bundle/bundle.json" "$1"
}
shim_rel=$(entry_path shim)
probe_rel=$(entry_path probe)
# Both files are thin arm64 (checked below), so bundle.json must say exactly that: no arm64e
# slice is promised (shim/README.md).
for file in shim probe; do
  [ "$(entry_slices $file)" = arm64 ] ||
    fail "bundle.json lists slices '$(entry_slices $file)' for the darwin-arm64 $file, not 'arm64'"
done
[ -n "$shim_rel" ] || fail "bundle.json has no darwin-arm64 shim"
[ -n "$probe_rel" ] || fail "bundle.json has no darwin-arm64 probe"
dylib=$bundle/$shim_rel
probe=$bundle/$probe_rel

# Checks shared by both files: arm64 of `filetype`, signed, minimum macOS 13.0, and the libraries.
check_common() {
  local file=$1 filetype=$2
  shift 2
  [ -f "$file" ] || fail "\"$file\" does not exist"
  local header commands
  header=$("$objdump" --macho --private-header "$file")
  grep -Eq "MH_MAGIC_64 +ARM64 +ALL .* $filetype " <<<"$header" ||
    fail "$file is not an arm64 MH_$filetype: $header"
  commands=$("$objdump" --macho --private-headers "$file")
  grep -q 'cmd LC_CODE_SIGNATURE' <<<"$commands" || fail "$file has no LC_CODE_SIGNATURE"
  grep -A4 'cmd LC_BUILD_VERSION' <<<"$commands" | grep -q 'minos 13.0' ||
    fail "$file: minimum macOS is not 13.0"
  local lib
  for lib in "$@"; do
    grep -A2 'cmd LC_LOAD_DYLIB' <<<"$commands" | grep -q "name $lib " ||
      fail "$file has no LC_LOAD_DYLIB for $lib"
  done
}
system_libs=(/usr/lib/libobjc.A.dylib /usr/lib/libSystem.B.dylib
  /System/Library/Frameworks/Metal.framework/Versions/A/Metal)

check_common "$dylib" DYLIB "${system_libs[@]}"
"$objdump" --macho --private-headers "$dylib" | grep -A2 'cmd LC_ID_DYLIB' |
  grep -q 'name @rpath/liblume-unlock-shim.dylib ' ||
  fail "install name is not @rpath/liblume-unlock-shim.dylib"
sections=$("$objdump" --macho --section-headers "$dylib")
! grep -q ' __interpose ' <<<"$sections" || fail "the shim has an __interpose section"
grep -Eq ' (__mod_init_func|__init_offsets) ' <<<"$sections" || fail "the shim has no constructor"
binds=$("$objdump" --macho --dyld-info "$dylib")
for fn in _MTLCreateSystemDefaultDevice _MTLCopyAllDevices __dyld_register_func_for_add_image; do
  ! grep -q " $fn\$" <<<"$binds" || fail "the shim binds $fn: only the private init may be its way in"
done
# The constructor's swap: the class and selector by name, the runtime calls that swap the method.
for fn in _objc_getClass _class_getInstanceMethod _method_setImplementation; do
  grep -Eq " libobjc +$fn\$" <<<"$binds" || fail "the shim does not bind libobjc $fn"
done
for text in _MTLDevice initGPUFamilySupport; do
  python3 -c 'import sys; sys.exit(b"\0" + sys.argv[2].encode() + b"\0" not in open(sys.argv[1], "rb").read())' \
    "$dylib" "$text" || fail "the shim does not name $text"
done
"$objdump" --macho --exports-trie "$dylib" | grep -q '_lume_unlock_shim_state' ||
  fail "lume_unlock_shim_state is not exported"
# The same policy code as the Linux .so: its C interface is linked in.
symbols=$("$objdump" --syms "$dylib")
for sym in _lume_unlock_policy_decide _lume_unlock_policy_family_forced_true _lume_unlock_hooks_install_for_class; do
  grep -q " $sym\$" <<<"$symbols" || fail "$sym is missing from the shim"
done

check_common "$probe" EXECUTE "${system_libs[@]}"
# The probe opens the device through Metal's public creation functions, bound from Metal.
probe_binds=$("$objdump" --macho --bind --lazy-bind "$probe" 2>/dev/null || true)
probe_binds+=$("$objdump" --macho --dyld-info "$probe" 2>/dev/null || true)
for fn in _MTLCreateSystemDefaultDevice _MTLCopyAllDevices _sel_registerName; do
  grep -q "$fn" <<<"$probe_binds" || fail "the probe does not bind $fn"
done
echo "check_darwin_bundle: $shim_rel and $probe_rel are arm64, signed, and link Metal and libobjc;" \
  "the shim's one way in is its constructor's initGPUFamilySupport swap"
