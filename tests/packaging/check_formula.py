#!/usr/bin/env python3
"""Checks that packaging/homebrew/lume-unlock.rb depends on exactly the Homebrew packages
scripts/bootstrap installs to build lume-unlock on macOS (brew_build_packages), and that every
macOS package bootstrap installs is either one of those or one of the test-only ones, and that
the formula names the license of the LICENSE file (MIT).
Usage: check_formula.py SOURCE_DIR"""
import re
import sys


def bash_array(text, name):
    match = re.search(r"^%s=\(([^)]*)\)" % re.escape(name), text, re.M)
    if not match:
        sys.exit("scripts/bootstrap has no %s=(...) array" % name)
    return match.group(1).split()


def main():
    root = sys.argv[1]
    bootstrap = open(root + "/scripts/bootstrap").read()
    formula = open(root + "/packaging/homebrew/lume-unlock.rb").read()
    build = bash_array(bootstrap, "brew_build_packages")
    tests = bash_array(bootstrap, "brew_test_packages")
    installed = bash_array(bootstrap, "brew_packages")
    # Formula dependencies by name (`depends_on "x"` or `depends_on "x" => :build`); symbols such
    # as `depends_on :macos` are requirements, not packages.
    formula_deps = re.findall(r'^\s*depends_on\s+"([^"]+)"', formula, re.M)
    problems = []
    if not formula_deps:
        problems.append("the formula has no depends_on lines")
    for name in sorted(set(formula_deps) - set(build)):
        problems.append("the formula depends on %s, which scripts/bootstrap does not install" % name)
    for name in sorted(set(build) - set(formula_deps)):
        problems.append("scripts/bootstrap builds with %s, which the formula does not depend on" % name)
    test_block = formula[formula.find("test do"):]
    for wanted in ("lume-unlock --version", "lume-unlock inspect-log"):
        if wanted not in test_block:
            problems.append("the formula's test do block does not run '%s'" % wanted)
    license = open(root + "/LICENSE").read()
    if not license.startswith("MIT License\n"):
        problems.append("LICENSE does not start with 'MIT License'")
    if not re.search(r'^\s*license\s+"MIT"\s*$', formula, re.M):
        problems.append('the formula does not name the license (license "MIT")')
    if installed != ['"${brew_build_packages[@]}"', '"${brew_test_packages[@]}"']:
        problems.append("brew_packages must be brew_build_packages then brew_test_packages")
    for name in sorted(set(build) & set(tests)):
        problems.append("%s is listed as both a build and a test package" % name)
    for line in problems:
        print("check_formula: " + line)
    if problems:
        return 1
    print("check_formula: %d dependencies match: %s" % (len(build), " ".join(sorted(build))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
