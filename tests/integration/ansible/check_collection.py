#!/usr/bin/env python3
"""Checks the lume_unlock.lume collection without a Lume: every Python file compiles, ansible-doc
renders every module, the options ansible-doc shows are exactly the module's argument_spec (names,
types, defaults, choices, required, suboptions) and each has a description, and the example
playbook passes ansible-playbook --syntax-check with the example inventory."""
import argparse
import importlib.util
import json
import os
import pathlib
import py_compile
import shutil
import subprocess
import sys

FQCN = "lume_unlock.lume."


class SpecCaptured(Exception):
    pass


def argument_spec_of(path):
    """The argument_spec a module hands to AnsibleModule, captured without running the module."""
    import ansible.module_utils.basic as basic

    captured = {}

    class Capture:
        def __init__(self, argument_spec, **kwargs):
            captured["spec"] = argument_spec
            raise SpecCaptured()

    real = basic.AnsibleModule
    basic.AnsibleModule = Capture
    try:
        spec = importlib.util.spec_from_file_location("module_under_check", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.AnsibleModule = Capture
        try:
            module.main()
        except SpecCaptured:
            pass
    finally:
        basic.AnsibleModule = real
    return captured["spec"]


def compare(spec, documented, where):
    problems = []
    for name in sorted(set(spec) | set(documented)):
        at = "%s.%s" % (where, name)
        if name not in documented:
            problems.append("%s: in argument_spec, not shown by ansible-doc" % at)
            continue
        if name not in spec:
            problems.append("%s: shown by ansible-doc, not in argument_spec" % at)
            continue
        s, d = spec[name], documented[name]
        if not d.get("description"):
            problems.append("%s: no description" % at)
        for key, default in (("type", "str"), ("required", False), ("default", None),
                             ("choices", None), ("elements", None)):
            if s.get(key, default) != d.get(key, default):
                problems.append("%s: %s is %r in the code, %r in the documentation" %
                                (at, key, s.get(key, default), d.get(key, default)))
        if "options" in s or "suboptions" in d:
            problems += compare(s.get("options") or {}, d.get("suboptions") or {}, at)
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--collection", required=True)
    parser.add_argument("--ansible-doc", required=True)
    parser.add_argument("--ansible-playbook", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    for tool in (args.ansible_doc, args.ansible_playbook):
        if not os.access(tool, os.X_OK):
            sys.exit("not installed: %s (scripts/bootstrap installs ansible-core)" % tool)
    # The modules are imported with Ansible's own Python: the one ansible-doc runs with.
    with open(args.ansible_doc) as script:
        interpreter = script.readline()[2:].split()[0]
    if os.path.realpath(interpreter) != os.path.realpath(sys.executable):
        os.execv(interpreter, [interpreter] + sys.argv)

    collection = pathlib.Path(args.collection).resolve()
    work = pathlib.Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    (work / "ansible_collections/lume_unlock").mkdir(parents=True)
    os.symlink(collection, work / "ansible_collections/lume_unlock/lume")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(work), ANSIBLE_HOME=str(work / "home"),
               ANSIBLE_LOCAL_TEMP=str(work / "tmp"), ANSIBLE_NOCOLOR="1")
    sys.path.insert(0, str(work))

    problems = []
    for source in sorted(collection.rglob("*.py")):
        try:
            py_compile.compile(str(source), cfile=str(work / "pyc" / (source.name + "c")),
                               doraise=True)
        except py_compile.PyCompileError as error:
            problems.append("%s: does not compile: %s" % (source, error.msg))

    modules = sorted((collection / "plugins/modules").glob("*.py"))
    if not modules:
        problems.append("no modules in %s" % collection)
    for path in modules:
        name = FQCN + path.stem
        shown = subprocess.run([args.ansible_doc, "--json", name], env=env,
                               capture_output=True, text=True)
        text = subprocess.run([args.ansible_doc, name], env=env, capture_output=True, text=True)
        if shown.returncode != 0 or text.returncode != 0:
            problems.append("%s: ansible-doc failed: %s%s" % (name, shown.stderr, text.stderr))
            continue
        doc = json.loads(shown.stdout)[name]["doc"]
        for section in ("short_description", "description"):
            if not doc.get(section):
                problems.append("%s: no %s" % (name, section))
        for option in doc.get("options", {}):
            if "- %s\n" % option not in text.stdout and "= %s\n" % option not in text.stdout:
                problems.append("%s: ansible-doc's text does not show option %s" % (name, option))
        spec = argument_spec_of(path)
        problems += compare(spec, doc.get("options", {}), name)
        print("%s: %d options documented" % (name, len(doc.get("options", {}))))

    playbook = subprocess.run(
        [args.ansible_playbook, "--syntax-check", "-i",
         str(collection / "playbooks/inventory.example.yml"), FQCN + "rollout"],
        env=env, capture_output=True, text=True)
    if playbook.returncode != 0:
        problems.append("rollout.yml: syntax check failed: %s%s" %
                        (playbook.stdout, playbook.stderr))

    for problem in problems:
        print("problem: " + problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
