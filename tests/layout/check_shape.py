#!/usr/bin/env python3
"""Checks the shape of the product sources (issue 33) and of the stand-ins in tests/sim (issue 44):
no file over 500 lines, no cli/ file over 200 lines, no function over 80 lines. Prints each violation as `file:line: what has N lines,
limit L` and exits 1 when there is one.

Functions are found by a careful heuristic, not a parser. Comments, strings, character literals,
raw strings and preprocessor lines are blanked out first, so their braces never count. A brace
block is a function body when the text before it reads as a signature: it ends in a `)`, perhaps
followed by qualifiers (const, noexcept, override, final, `-> type`) or a constructor's
initialiser list, and the name before the parameter list is not a control statement or a
lambda's `[captures]`; or it is an Objective-C method (`- (type)selector`). Namespace, class,
struct, enum and union blocks are looked into; lambdas and local classes count toward the
function that encloses them. A function runs from its signature's first line to its closing
brace.

Scripts (`.py`, `.sh`, or no extension and a python or sh/bash shebang) are measured too: Python
functions and methods through the `ast` module, from `def` (or its first decorator) to their last
line; shell functions from a `name() {` or `function name {` line to the first line that is a
lone `}` at the same indentation (one-line functions are one line). Other files are left alone.

usage: check_shape.py ROOT [FOLDER...]   (folders relative to ROOT; default: provisioner shim tests/sim)
"""
import ast
import os
import re
import sys

FILE_LIMIT = 500
CLI_FILE_LIMIT = 200
FUNCTION_LIMIT = 80
EXTENSIONS = (".cpp", ".hpp", ".c", ".h", ".m", ".mm")
DEFAULT_FOLDERS = ["provisioner", "shim", "tests/sim"]

# Each entry excuses exactly one violation a file has today: ("file", path) for its length,
# ("function", path, name) for one long function. An entry that excuses nothing any more is
# reported (as a note) so it gets removed.
# Empty: every product file and function is within the limits. An entry, when one is needed,
# excuses exactly one violation and names why.
ALLOWED = set()
# The same for the stand-ins under tests/sim (issue 44), kept apart so product code never
# borrows an excuse from a test double. Empty: every stand-in is within the limits.
ALLOWED_STAND_INS = set()

CONTROL_WORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "alignof",
                 "decltype", "typeid", "alignas", "static_assert", "__attribute__"}
TRAILING_QUALIFIERS = re.compile(
    r"(?:\s|\bconst\b|\bvolatile\b|\bnoexcept\b|\boverride\b|\bfinal\b|\bmutable\b|&|"
    r"->\s*[\w:<>,\s*&]+)*$")
NAME_BEFORE_PARAMETERS = re.compile(
    r"(operator\s*\(\s*\)|operator\s*[^\s\w(]+|[~\w]+(?:\s*::\s*[~\w]+)*)\s*(?:<[^()]*>)?$")
ACCESS_LABEL = re.compile(r"^\s*(?:public|private|protected)\s*:(?!:)")


def blank_literals(text):
    """Returns text with comments, strings, character literals, raw strings and preprocessor
    lines replaced by spaces. Newlines stay, so positions and line numbers do not move."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        end = None
        if text.startswith("//", i):
            end = _line_end(text, i, follow_continuations=False)
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            end = n if close < 0 else close + 2
        elif line_start and c == "#":
            end = _line_end(text, i, follow_continuations=True)
        elif _raw_string_at(text, i):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren]
            close = text.find(")" + delimiter + '"', open_paren)
            end = n if close < 0 else close + len(delimiter) + 2
        elif c == '"' or (c == "'" and not _digit_separator(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, n)
        if end is None:
            out.append(c)
            line_start = c == "\n" or (line_start and c in " \t")
            i += 1
        else:
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            line_start = False
            i = end
    return "".join(out)


def _line_end(text, i, follow_continuations):
    while True:
        end = text.find("\n", i)
        if end < 0:
            return len(text)
        if not (follow_continuations and text[:end].rstrip(" \t\r").endswith("\\")):
            return end
        i = end + 1


def _raw_string_at(text, i):
    """True at the R of R"delim(...)delim", alone or after the u8/u/U/L prefixes."""
    if not text.startswith('R"', i):
        return False
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
        j -= 1
    return text[j:i] in ("", "u8", "u", "U", "L")


def _digit_separator(text, i):
    """True for the ' inside a number such as 1'000'000."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_'."):
        j -= 1
    return j < i and text[j].isdigit()


def head_before(code, brace):
    """Where the statement head before the `{` at `brace` starts: after the previous `;`, `{`
    or `}` outside parentheses and brackets."""
    depth = 0
    i = brace - 1
    while i >= 0:
        c = code[i]
        if c in ")]" or (c == "}" and _continues_initialisers(code, i)):
            depth += 1
        elif c in "([" or (c == "{" and depth > 0):
            depth -= 1
        elif depth <= 0 and c in ";{}":
            break
        i -= 1
    return i + 1


def _continues_initialisers(code, close):
    """True when the `}` at `close` ends a brace initialiser inside a constructor's initialiser
    list (`b_{1}, c_(2) {` or `b_{1} {`): the next visible character is `,` or `{`."""
    rest = code[close + 1:].lstrip()
    return rest[:1] in (",", "{")


def _without_initialisers(head):
    """Cuts a constructor's `: member(init), ...` list off a head, at its first top-level
    single colon that follows a `)`. None when the list does not end in `)` or `}`: then the
    `{` opens a member's brace initialiser, not the body."""
    depth = 0
    for k, c in enumerate(head):
        if c in "([<":
            depth += 1
        elif c in ")]>":
            depth -= 1
        elif c == ":" and depth == 0 and head[k - 1:k] != ":" and head[k + 1:k + 2] != ":":
            before = TRAILING_QUALIFIERS.sub("", head[:k])
            if before.endswith(")"):
                return head[:k] if head.rstrip()[-1:] in (")", "}") else None
    return head


OBJC_METHOD = re.compile(r"^[ \t]*[-+][ \t]*\([^()]*\)[ \t]*(\w+)[^;]*$", re.M)


def signature_start(head):
    """Where the signature starts in a function's head: past blanks and an access label, or at
    an Objective-C method's `-`/`+` (after `@implementation` and the like)."""
    objc = OBJC_METHOD.search(head)
    if objc:
        return objc.start() + len(objc.group(0)) - len(objc.group(0).lstrip())
    return len(head) - len(ACCESS_LABEL.sub("", head).lstrip())


def function_name(head):
    """The function's name when `head`, the text before a `{`, reads as a function definition's
    signature; None otherwise."""
    head = ACCESS_LABEL.sub("", head)
    objc = OBJC_METHOD.search(head)
    if objc:
        return objc.group(1)
    signature = _without_initialisers(head)
    if signature is None:
        return None
    # Qualifiers hold no parentheses: they can only follow the last `)`. Matching them there,
    # not by a search anchored at the end, keeps this linear in the signature's length.
    stripped = signature.rstrip()
    close = stripped.rfind(")")
    if close < 0 or not TRAILING_QUALIFIERS.fullmatch(stripped, close + 1):
        return None
    core = stripped[:close + 1]
    depth = 0
    k = len(core) - 1
    while k >= 0:
        depth += {")": 1, "(": -1}.get(core[k], 0)
        if depth == 0:
            break
        k -= 1
    before = core[:max(k, 0)].rstrip()
    if k < 0 or before.endswith("]"):
        return None  # unbalanced, or a lambda's [captures](parameters)
    match = NAME_BEFORE_PARAMETERS.search(before)
    if not match:
        return None
    name = re.sub(r"\s+", "", match.group(1))
    if name.split("::")[-1] in CONTROL_WORDS:
        return None
    return name


def functions(code):
    """Yields (first_line, last_line, name) of each outermost function body in blanked code."""
    line_starts = [0] + [k + 1 for k, c in enumerate(code) if c == "\n"]

    def line_of(pos):
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    open_blocks = []  # per open brace: (head start, name) of a function body, else None
    inside = 0  # how many open braces belong to a function body
    for pos, c in enumerate(code):
        if c == "{":
            block = None
            if inside == 0:
                start = head_before(code, pos)
                name = function_name(code[start:pos])
                if name:
                    block = (start + signature_start(code[start:pos]), name)
            if block or inside:
                inside += 1
            open_blocks.append(block)
        elif c == "}" and open_blocks:
            block = open_blocks.pop()
            inside = max(inside - 1, 0)
            if block:
                yield line_of(block[0]), line_of(pos), block[1]


SHELL_FUNCTION = re.compile(r"^([ \t]*)(?:function[ \t]+([\w-]+)[ \t]*(?:\(\))?|([\w-]+)[ \t]*\(\))"
                            r"[ \t]*\{")


def script_kind(path, text):
    """"python", "shell" or None for a file that is neither (by extension, then shebang)."""
    if path.endswith(".py"):
        return "python"
    if path.endswith(".sh"):
        return "shell"
    if "." in os.path.basename(path) or not text.startswith("#!"):
        return None
    shebang = text.split("\n", 1)[0]
    if "python" in shebang:
        return "python"
    if re.search(r"\b(?:ba|da|k|z)?sh\b", shebang):
        return "shell"
    return None


def python_functions(text):
    """Yields (first_line, last_line, name) of every Python function, nested ones included."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            yield first, node.end_lineno, node.name


def shell_functions(text):
    """Yields (first_line, last_line, name) of every shell function whose body opens with `{`
    on its header line and closes with a lone `}` at the header's indentation."""
    lines = text.split("\n")
    for k, line in enumerate(lines):
        match = SHELL_FUNCTION.match(line)
        if not match:
            continue
        name = match.group(2) or match.group(3)
        rest = line[match.end():].rstrip()
        if rest.endswith("}"):
            yield k + 1, k + 1, name
            continue
        closing = match.group(1) + "}"
        last = next((j for j in range(k + 1, len(lines)) if lines[j].rstrip() == closing),
                    len(lines) - 1)
        yield k + 1, last + 1, name


def functions_of(rel, text):
    kind = script_kind(rel, text)
    if kind == "python":
        return python_functions(text)
    if kind == "shell":
        return shell_functions(text)
    return functions(blank_literals(text))


def check_file(root, rel, excused):
    """Every violation of one file, excused ones left out (and added to `excused`)."""
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as source:
        text = source.read()
    found = []
    allowed = ALLOWED_STAND_INS if rel.startswith("tests/") else ALLOWED
    lines = text.count("\n")  # as `wc -l` counts
    if lines > FILE_LIMIT and ("file", rel) in allowed:
        excused.add(("file", rel))
    elif lines > FILE_LIMIT:
        found.append(f"{rel}:1: file has {lines} lines, limit {FILE_LIMIT}")
    if ("/" + rel).count("/cli/") and lines > CLI_FILE_LIMIT:
        found.append(f"{rel}:1: cli/ file has {lines} lines, limit {CLI_FILE_LIMIT}")
    for first, last, name in functions_of(rel, text):
        length = last - first + 1
        if length > FUNCTION_LIMIT and ("function", rel, name) in allowed:
            excused.add(("function", rel, name))
        elif length > FUNCTION_LIMIT:
            found.append(f"{rel}:{first}: function {name} has {length} lines, "
                         f"limit {FUNCTION_LIMIT}")
    return found


def sources(root, folders):
    for folder in folders:
        for directory, subdirs, names in os.walk(os.path.join(root, folder)):
            subdirs.sort()
            for name in sorted(names):
                path = os.path.join(directory, name)
                if name.endswith(EXTENSIONS) or script_kind(path, _head(path)):
                    yield os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/")


def _head(path):
    """The first bytes of a file, enough for its shebang."""
    try:
        with open(path, encoding="utf-8", errors="replace") as source:
            return source.read(200)
    except OSError:
        return ""


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = sys.argv[1]
    found = []
    excused = set()
    checked = set()
    for rel in sources(root, sys.argv[2:] or DEFAULT_FOLDERS):
        checked.add(rel)
        found.extend(check_file(root, rel, excused))
    for entry in sorted(e for e in (ALLOWED | ALLOWED_STAND_INS) - excused if e[1] in checked):
        print(f"note: the allowlist entry {entry} excuses nothing now; remove it", file=sys.stderr)
    for line in found:
        print(line)
    sys.stdout.flush()
    if found:
        print(f"{len(found)} shape violation(s): split along concerns (issue 33)", file=sys.stderr)
        return 1
    print(f"{len(checked)} files keep their shape: files <= {FILE_LIMIT} lines, cli/ files <= "
          f"{CLI_FILE_LIMIT}, functions <= {FUNCTION_LIMIT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
