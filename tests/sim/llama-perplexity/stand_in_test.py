#!/usr/bin/env python3
"""The llama-perplexity stand-in against the real tool's documented behaviour (docs/sources.md,
"llama-perplexity"): chunk values on stdout, the Final estimate on stderr, a text shorter than
2 x n_ctx tokens refused with two stderr lines and exit status 0, and figures that depend on the
model, the text and (through the test control only) the GPU side.
Usage: stand_in_test.py STAND_IN TEXT"""
import os
import re
import subprocess
import sys
import tempfile

stand_in, text = sys.argv[1], sys.argv[2]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def run(model, text_file, *extra, env=None):
    return subprocess.run([stand_in, "-m", model, "-f", text_file, "-c", "512", "-b", "512",
                           *extra], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})))


def estimate(result):
    # No ^: the real stderr has "... ETA " (its minutes go to stdout) on the same line.
    found = re.findall(r"Final estimate: PPL = (\d+\.\d{4}) \+/- \d+\.\d{5}$", result.stderr,
                       re.M)
    return float(found[-1]) if found else None


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "m.gguf")
    other = os.path.join(tmp, "other.gguf")
    with open(model, "wb") as f:
        f.write(b"GGUF model one")
    with open(other, "wb") as f:
        f.write(b"GGUF model two")
    short = os.path.join(tmp, "short.txt")
    with open(text) as f, open(short, "w") as g:
        g.write(" ".join(f.read().split()[:300]))

    cpu = run(model, text, "-ngl", "0")
    check(cpu.returncode == 0, "the CPU run exits 0")
    check(re.search(r"^\[1\]\d+\.\d{4},\[2\]\d+\.\d{4},", cpu.stdout, re.M),
          "chunk values on stdout as [1]x.xxxx,[2]...")
    check("[1]" not in cpu.stderr and "Final estimate" not in cpu.stdout,
          "each line on its own stream")
    check(estimate(cpu) is not None, "a Final estimate on stderr")
    check(estimate(run(model, text, "-ngl", "0")) == estimate(cpu), "the same inputs, the same PPL")
    check(estimate(run(other, text, "-ngl", "0")) != estimate(cpu), "another model, another PPL")

    gpu = run(model, text, "-ngl", "999")
    check(estimate(gpu) is not None and abs(estimate(gpu) / estimate(cpu) - 1) < 0.001,
          "the GPU run within rounding of the CPU's")
    drift = {"LLAMA_PERPLEXITY_SIM_GPU_DRIFT": "0.10"}
    drifted = run(model, text, "-ngl", "999", env=drift)
    check(estimate(drifted) is not None and abs(estimate(drifted) / estimate(gpu) - 1.10) < 0.001,
          "the test control drifts the GPU run")
    check(estimate(run(model, text, "-ngl", "0", env=drift)) == estimate(cpu),
          "the test control leaves -ngl 0 alone")

    too_short = run(model, short, "-ngl", "0")
    check(too_short.returncode == 0, "too short a text still exits 0, as the real tool does")
    check(re.search(r"^perplexity: you need at least 1024 tokens to evaluate perplexity with a "
                    r"context of 512$", too_short.stderr, re.M), "the first error line")
    check(re.search(r"^perplexity: the data file you provided tokenizes to only \d+ tokens$",
                    too_short.stderr, re.M), "the second error line")
    check(estimate(too_short) is None and "[1]" not in too_short.stdout, "no figures")

    check(run("/nonexistent.gguf", text).returncode == 1, "a model it cannot load: exit 1")
    check(run(model, "/nonexistent.txt").returncode == 1, "a text it cannot open: exit 1")

for failure in failures:
    print("FAILED:", failure)
sys.exit(1 if failures else 0)
