#!/usr/bin/env python3
"""Runs check_shape.py on small source trees composed in a temporary directory, so the checker
cannot silently pass everything: each limit is met exactly (and passes), then exceeded by one
line (and fails naming file, line, length and limit). Exits 1 on the first wrong answer.

usage: check_shape_test.py
"""
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_shape.py")


def function(name, lines, signature="int {name}(int value)", body_line="  value += 1;"):
    """A function of exactly `lines` lines: signature line, body, closing brace."""
    return "\n".join([signature.format(name=name) + " {"] + [body_line] * (lines - 3)
                     + ["  return value;", "}"]) + "\n"


def python_function(name, lines, indent=""):
    """A Python function of exactly `lines` lines, perhaps nested under `indent`."""
    return "\n".join([f"{indent}def {name}(value):"] + [f"{indent}    value += 1"] * (lines - 2)
                     + [f"{indent}    return value"]) + "\n"


def shell_function(name, lines):
    """A shell function of exactly `lines` lines, with a brace in a string that must not end it."""
    return "\n".join([f"{name}() {{"] + ["  printf '%s\\n' '}'"] + ["  : step"] * (lines - 3)
                     + ["}"]) + "\n"


def padded(text, lines):
    """`text` followed by blank lines up to `lines` lines in all."""
    return text + "\n" * (lines - text.count("\n"))


def run(files):
    """Writes `files` (path -> text) under a fresh root and returns (exit code, stdout)."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as out:
                out.write(text)
        done = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
        return done.returncode, done.stdout


TRICKY_BODY = "\n".join([
    "int tricky(int value) {",
    '  const char* close = "}}}";',
    "  const char open = '{';",
    '  const char* raw = R"delim(} { })delim";',
    "  // } a closing brace in a comment",
    "  /* { */",
    "  auto add = [&](int x) { return x + value; };",
    "  int million = 1'000'000;",
    "  struct Local { int f() { return 1; } };",
    "#define NOT_A_BRACE }",
    "  if (value) {",
    "    value = add(million);",
    "  }",
]) + "\n"

CASES = [
    # (name, files, expected exit code, text expected in the output)
    ("a function of 80 lines passes",
     {"provisioner/a/a.cpp": function("f", 80)}, 0, "keep their shape"),
    ("a function of 81 lines fails",
     {"provisioner/a/a.cpp": "// leading comment\n" + function("f", 81)}, 1,
     "provisioner/a/a.cpp:2: function f has 81 lines, limit 80"),
    ("a member function in a class in a namespace is measured",
     {"provisioner/a/a.hpp": "namespace n {\nclass C {\n public:\n"
      + function("g", 81, "  int {name}(int value) const") + "};\n}\n"}, 1,
     "provisioner/a/a.hpp:4: function g has 81 lines, limit 80"),
    ("a constructor with an initialiser list is measured",
     {"provisioner/a/a.cpp": function("C::C", 81, "C::C(int value) : value_(value), b_{{1}}")},
     1, "provisioner/a/a.cpp:1: function C::C has 81 lines, limit 80"),
    ("braces in strings, chars, raw strings, comments and macros do not count; lambdas and "
     "local classes belong to their function",
     {"provisioner/a/a.cpp": TRICKY_BODY + "\n".join(["  value += 1;"] * 66)
      + "\n  return value;\n}\n"}, 1,
     "provisioner/a/a.cpp:1: function tricky has 81 lines, limit 80"),
    ("the same tricky function at 80 lines passes",
     {"provisioner/a/a.cpp": TRICKY_BODY + "\n".join(["  value += 1;"] * 65)
      + "\n  return value;\n}\n"}, 0, "keep their shape"),
    ("C, Objective-C and Objective-C++ files are checked",
     {"shim/x/x.c": function("c_f", 81), "shim/x/x.h": "#pragma once\n",
      "shim/x/y.m": "@implementation Y\n" + function("method", 81, "- (int){name}:(int)value")
      + "@end\n",
      "shim/x/z.mm": function("mm_f", 81)}, 1,
     "shim/x/y.m:2: function method has 81 lines, limit 80"),
    ("a file of 500 lines passes",
     {"provisioner/a/big.cpp": padded("int x;\n", 500)}, 0, "keep their shape"),
    ("a file of 501 lines fails",
     {"provisioner/a/big.cpp": padded("int x;\n", 501)}, 1,
     "provisioner/a/big.cpp:1: file has 501 lines, limit 500"),
    ("a cli file of 200 lines passes",
     {"provisioner/cli/c.cpp": padded("int x;\n", 200)}, 0, "keep their shape"),
    ("a cli file of 201 lines fails",
     {"provisioner/cli/c.cpp": padded("int x;\n", 201)}, 1,
     "provisioner/cli/c.cpp:1: cli/ file has 201 lines, limit 200"),
    ("a stand-in's C++ function of 81 lines in tests/sim fails",
     {"tests/sim/s/main.cpp": function("main", 81)}, 1,
     "tests/sim/s/main.cpp:1: function main has 81 lines, limit 80"),
    ("a stand-in file of 501 lines fails",
     {"tests/sim/s/sim.cpp": padded("int x;\n", 501)}, 1,
     "tests/sim/s/sim.cpp:1: file has 501 lines, limit 500"),
    ("a Python stand-in (shebang, no extension) with functions of 80 lines passes",
     {"tests/sim/s/tool": "#!/usr/bin/env python3\n" + python_function("f", 80)
      + "class C:\n" + python_function("m", 80, "    "),
      "tests/sim/s/t.py": python_function("g", 80)}, 0, "keep their shape"),
    ("a Python method of 81 lines fails, decorator counted",
     {"tests/sim/s/tool": "#!/usr/bin/env python3\nclass C:\n    @staticmethod\n"
      + python_function("m", 80, "    ")}, 1,
     "tests/sim/s/tool:3: function m has 81 lines, limit 80"),
    ("a Python file of 501 lines fails",
     {"tests/sim/s/t.py": padded("x = 1\n", 501)}, 1,
     "tests/sim/s/t.py:1: file has 501 lines, limit 500"),
    ("a shell function of 80 lines passes",
     {"tests/sim/s/run": "#!/usr/bin/env bash\n" + shell_function("start", 80)
      + "die() { exit 1; }\n"}, 0, "keep their shape"),
    ("a shell function of 81 lines fails",
     {"tests/sim/s/run": "#!/bin/sh\n" + shell_function("start", 81)}, 1,
     "tests/sim/s/run:2: function start has 81 lines, limit 80"),
    ("files that are neither sources nor scripts are not measured",
     {"tests/sim/s/README.md": padded("text\n", 600),
      "tests/sim/s/data": padded("#!not a script\n", 600)}, 0, "keep their shape"),
    ("namespaces, classes, enums and control statements are not functions",
     {"provisioner/a/a.cpp": "namespace n {\nenum class E { a, b };\nstruct S {\n"
      + "  int x;\n" * 90 + "};\n" + "}\n"}, 0, "keep their shape"),
]
EXTRA_LINES = {"C, Objective-C and Objective-C++ files are checked": [
    "shim/x/x.c:1: function c_f has 81 lines, limit 80",
    "shim/x/z.mm:1: function mm_f has 81 lines, limit 80"]}


def main():
    failures = 0
    for name, files, code, expected in CASES:
        got_code, output = run(files)
        wanted = [expected] + EXTRA_LINES.get(name, [])
        missing = [line for line in wanted if line not in output]
        if got_code != code or missing:
            failures += 1
            print(f"FAIL {name}: exit {got_code} (want {code}), missing {missing}\n{output}")
        else:
            print(f"ok   {name}")
    if failures:
        print(f"{failures} case(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
