#!/usr/bin/env python3
"""Keeps .github/workflows/macos.yml from rotting while it cannot run here.

1. Every `run:` line calls a command that exists: a repository script (resolved against the
   checkout, executable), a build product this check knows with the CMake target that makes it
   (the target defined in the repository's CMake files), or a tool of the macOS runner's base
   system; every `--target NAME` is a defined target; every `uses:` is a known action.
2. The JSON fields the workflow's scripts read from our commands exist in what those commands
   really print: the probe's output (stock and with the shim injected through LD_PRELOAD, on the
   emulated device) and bundle.json; compare-probes is run on those outputs, and must fail on an
   injected run whose ceiling changes no answer.
Usage: check_workflow.py SOURCE_DIR PROBE SHIM_SO BUNDLE_JSON"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys

import yaml

WORKFLOW = ".github/workflows/macos.yml"
# Tools of the macos-15 runner image itself (Xcode's and the base system's), not of this repo.
RUNNER_TOOLS = {"cmake", "codesign", "lipo", "mkdir"}
ACTIONS = {"actions/checkout@v4", "actions/upload-artifact@v4"}
# Build products the workflow names: path -> the CMake target that writes it.
BUILD_PRODUCTS = {
    "build/shim/probe/lume-unlock-probe": "lume_unlock_probe",
    "build/shim/darwin-universal/liblume-unlock-shim.dylib": "lume_unlock_shim_universal",
    "build/shim-bundle/bundle.json": "shim-bundle",
}
# The JSON fields each workflow script reads, as dotted paths into the document it reads.
PROBE_FIELDS = ["shim.state", "shim.reason", "device", "families"]
BUNDLE_FIELDS = ["platforms.darwin-arm64.shim.slices"]
READERS = {"scripts/ci/compare-probes": PROBE_FIELDS,
           "scripts/ci/check-bundle-slices": ["platforms", "slices"]}

problems = []


def problem(text):
    problems.append(text)
    print("check_workflow: " + text)


def cmake_targets(root):
    targets = set()
    pattern = re.compile(r"add_(?:executable|library|custom_target)\(\s*([A-Za-z0-9_.-]+)")
    for path in glob.glob(os.path.join(root, "**", "CMakeLists.txt"), recursive=True):
        if os.path.relpath(path, root).split(os.sep)[0].startswith("build"):
            continue  # build trees

        targets.update(pattern.findall(open(path).read()))
    return targets


def check_path(root, path, targets, where):
    if path.startswith("build/"):
        target = BUILD_PRODUCTS.get(path)
        if target is None:
            problem("%s: %s is no build product this check knows" % (where, path))
        elif target not in targets:
            problem("%s: %s comes from target %s, which no CMakeLists.txt defines"
                    % (where, path, target))
        return
    full = os.path.join(root, path)
    if not os.path.isfile(full) or not os.access(full, os.X_OK):
        problem("%s: %s is not an executable file of the repository" % (where, path))


def check_steps(root, workflow):
    targets = cmake_targets(root)
    commands = set()
    for job_name, job in workflow["jobs"].items():
        for index, step in enumerate(job["steps"]):
            where = "job %s step %d (%s)" % (job_name, index + 1, step.get("name", step.get("uses")))
            if "uses" in step:
                if step["uses"] not in ACTIONS:
                    problem("%s: unknown action %s" % (where, step["uses"]))
                continue
            for value in step.get("env", {}).values():
                match = re.search(r"\}\}/(build/\S+)", str(value))
                if match:
                    check_path(root, match.group(1), targets, where + " env")
            for line in step["run"].splitlines():
                words = shlex.split(line, comments=True)
                while words and re.match(r"^[A-Z_]+=", words[0]):
                    words.pop(0)
                if not words:
                    continue
                command = words[0]
                commands.add(command)
                if "/" in command:
                    check_path(root, command, targets, where)
                elif command not in RUNNER_TOOLS:
                    problem("%s: %s is neither a repository script nor a runner tool" % (where, command))
                for i, word in enumerate(words[1:], 1):
                    if words[i - 1] == "--target" and word not in targets:
                        problem("%s: --target %s is not defined" % (where, word))
                    if word.startswith("build/") and words[i - 1] != ">":
                        check_path(root, word, targets, where)
    return commands


def field(doc, dotted):
    for part in dotted.split("."):
        if not isinstance(doc, dict) or part not in doc:
            return None
        doc = doc[part]
    return doc


def probe(probe_path, shim, family_max):
    env = dict(os.environ)
    if shim:
        env.update(LD_PRELOAD=shim, LUME_METAL_APPLE_FAMILY_MAX=family_max)
    run = subprocess.run([probe_path, "--json"], env=env, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("check_workflow: the probe failed: %s" % run.stderr)
    return json.loads(run.stdout)


def check_fields(root, probe_path, shim, bundle_json, commands, tmp):
    for reader, fields in READERS.items():
        if reader not in commands:
            problem("the workflow no longer runs %s; update this check" % reader)
        source = open(os.path.join(root, reader)).read()
        for name in fields:
            if '"%s"' % name.split(".")[-1] not in source:
                problem("%s does not read \"%s\" any more; update this check" % (reader, name))
    stock, injected = probe(probe_path, None, None), probe(probe_path, shim, "1009")
    for name in PROBE_FIELDS:
        for label, doc in (("stock", stock), ("injected", injected)):
            if field(doc, name) is None:
                problem("the %s probe output has no %s" % (label, name))
    if field(injected, "shim.state") != "active":
        problem("the injected probe's shim.state is %s, not active" % field(injected, "shim.state"))
    bundle = json.load(open(bundle_json))
    if "darwin-arm64" in bundle.get("platforms", {}):
        for name in BUNDLE_FIELDS:
            if field(bundle, name) is None:
                problem("bundle.json has no %s" % name)
    else:
        print("check_workflow: this build's bundle has no darwin-arm64 entry; its fields are not checked")
    compare = os.path.join(root, "scripts/ci/compare-probes")
    paths = {}
    for label, doc in (("stock", stock), ("injected", injected), ("unchanged", probe(probe_path, shim, "1005"))):
        paths[label] = os.path.join(tmp, label + ".json")
        json.dump(doc, open(paths[label], "w"))
    good = subprocess.run([compare, "--require-active", paths["stock"], paths["injected"]],
                          capture_output=True, text=True)
    if good.returncode != 0 or "Apple family 1006: False -> True" not in good.stdout:
        problem("compare-probes on the emulated device's outputs: exit %d\n%s"
                % (good.returncode, good.stdout + good.stderr))
    # A ceiling at what the device already answers (Apple5): active, nothing changed.
    bad = subprocess.run([compare, paths["stock"], paths["unchanged"]], capture_output=True, text=True)
    if bad.returncode != 1 or "FAIL: the shim is active but no Apple family answer changed" not in bad.stdout:
        problem("compare-probes passed an active shim that changed nothing: exit %d\n%s"
                % (bad.returncode, bad.stdout + bad.stderr))


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    root, probe_path, shim, bundle_json = argv
    workflow = yaml.safe_load(open(os.path.join(root, WORKFLOW)))
    if workflow["jobs"]["macos-arm64"]["runs-on"] != "macos-15":
        problem("the job does not run on macos-15")
    commands = check_steps(root, workflow)
    tmp = os.environ.get("TMPDIR", "/tmp")
    tmp = os.path.join(tmp, "check_workflow-%d" % os.getpid())
    os.makedirs(tmp, exist_ok=True)
    check_fields(root, probe_path, shim, bundle_json, commands, tmp)
    for name in os.listdir(tmp):
        os.remove(os.path.join(tmp, name))
    os.rmdir(tmp)
    if problems:
        return 1
    print("check_workflow: %s: %d commands exist (%s); the fields its scripts read are printed"
          % (WORKFLOW, len(commands), " ".join(sorted(commands))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
