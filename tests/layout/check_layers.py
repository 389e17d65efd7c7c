#!/usr/bin/env python3
"""Checks that every include between provisioner/ folders points down the floors that
ARCHITECTURE.md draws. A folder may include its own headers and those of any lower floor;
folders on the same floor stay independent. Prints each violation and exits 1.

usage: check_layers.py PROVISIONER_DIR
"""
import os
import re
import sys

# Lowest floor first; keep in step with ARCHITECTURE.md.
FLOORS = [
    ["util"],
    ["oci", "guest", "bundle", "macho", "verify"],
    ["lume", "signing", "fetch", "enablement"],
    ["provenance", "recipe"],
    ["apply", "transfer", "report"],
    ["pipeline"],
    ["cli"],
]
FLOOR_OF = {folder: level for level, folders in enumerate(FLOORS) for folder in folders}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def violations(root):
    found = []
    for folder in sorted(os.listdir(root)):
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            continue
        if folder not in FLOOR_OF:
            found.append(f"{folder}/: a folder ARCHITECTURE.md does not place on a floor")
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".cpp", ".hpp", ".in")):
                continue
            with open(os.path.join(path, name), encoding="utf-8") as source:
                text = source.read()
            for included in INCLUDE.findall(text):
                if included == folder or included not in FLOOR_OF:
                    continue
                if FLOOR_OF[included] >= FLOOR_OF[folder]:
                    found.append(f"{folder}/{name} includes {included}/: "
                                 f"floor {FLOOR_OF[included]} is not below floor {FLOOR_OF[folder]}")
    return found


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    found = violations(sys.argv[1])
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) point up or sideways; see ARCHITECTURE.md", file=sys.stderr)
        return 1
    print("every include points down the floors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
