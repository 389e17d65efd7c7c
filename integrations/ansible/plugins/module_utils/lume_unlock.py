# -*- coding: utf-8 -*-
# Shared by the lume_unlock.lume modules: runs the lume-unlock binary with --json and turns its
# document, its exit code and its {"error": {...}} into a module result.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

# The options every module takes (documented in the lume_unlock.lume.common doc fragment).
COMMON_ARGS = dict(
    binary=dict(type="str", default="lume-unlock"),
    lume_url=dict(type="str"),
    state_dir=dict(type="path"),
    lock_timeout=dict(type="float"),
    ssh_user=dict(type="str"),
    ssh_port=dict(type="int"),
    ssh_password=dict(type="str", no_log=True),
)

# lume-unlock's exit codes (README "Exit codes").
EXIT_NAMES = {
    1: "failure",
    2: "bad usage or input",
    3: "Lume API",
    4: "registry or digest",
    5: "guest/SSH",
    6: "verification failed",
}
EXIT_VERIFICATION = 6

# The environment variable the password travels in: never on a command line.
PASSWORD_ENV = "LUME_UNLOCK_ANSIBLE_GUEST_PASSWORD"

_HOLDER = re.compile(r"still held after [0-9.]+ s by (.+)$")


class LumeUnlockRun(object):
    """What one lume-unlock run gave: exit code, the parsed --json document, stderr."""

    def __init__(self, argv, rc, doc, stdout, stderr):
        self.argv = argv
        self.rc = rc
        self.doc = doc
        self.stdout = stdout
        self.stderr = stderr

    @property
    def error(self):
        if isinstance(self.doc, dict) and isinstance(self.doc.get("error"), dict):
            return self.doc["error"]
        return None


class LumeUnlock(object):
    """Runs `lume-unlock --json [globals] COMMAND ...` for one module invocation."""

    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.runs = []

    def binary(self):
        binary = self.params["binary"]
        if os.sep in binary:
            return binary
        found = self.module.get_bin_path(binary)
        if not found:
            self.module.fail_json(
                msg="lume-unlock: '%s' is not on PATH of the managed host; install lume-unlock "
                "there or set the module's 'binary' option to its full path" % binary)
        return found

    def global_args(self):
        args = ["--json"]
        if self.params.get("lume_url"):
            args += ["--lume-url", self.params["lume_url"]]
        if self.params.get("state_dir"):
            args += ["--state-dir", self.params["state_dir"]]
        if self.params.get("lock_timeout") is not None:
            args += ["--lock-timeout", "%g" % self.params["lock_timeout"]]
        return args

    def connection_args(self):
        args = []
        if self.params.get("ssh_user"):
            args += ["--ssh-user", self.params["ssh_user"]]
        if self.params.get("ssh_port") is not None:
            args += ["--ssh-port", str(self.params["ssh_port"])]
        if self.params.get("ssh_password") is not None:
            args += ["--ssh-password-env", PASSWORD_ENV]
        return args

    def run(self, command, guest=True):
        """Runs one command; returns a LumeUnlockRun (never fails the module itself)."""
        argv = [self.binary()] + self.global_args() + list(command)
        if guest:
            argv += self.connection_args()
        environ = {}
        if self.params.get("ssh_password") is not None:
            environ[PASSWORD_ENV] = self.params["ssh_password"]
        rc, out, err = self.module.run_command(argv, environ_update=environ)
        try:
            doc = json.loads(out) if out.strip() else None
        except ValueError:
            doc = None
        result = LumeUnlockRun(argv, rc, doc, out, err)
        self.runs.append({"command": argv[1:], "rc": rc})
        return result

    def fail(self, run, **extra):
        """Fails the module with lume-unlock's own message for a run that did not exit 0."""
        error = run.error
        if error:
            msg = error.get("message", "")
            extra.setdefault("category", error.get("category"))
            if error.get("hint"):
                extra.setdefault("hint", error["hint"])
        else:
            lines = [line for line in run.stderr.splitlines() if line.strip()]
            msg = lines[-1] if lines else "lume-unlock exited %d" % run.rc
        holder = lock_holder(msg)
        if holder:
            extra["lock_holder"] = holder
        extra.setdefault("exit_name", EXIT_NAMES.get(run.rc, "failure"))
        self.module.fail_json(msg=msg,
                              rc=run.rc,
                              stderr=run.stderr,
                              lume_unlock=self.runs,
                              **extra)

    def must(self, run):
        """The run's document when it exited 0; otherwise the module fails with its message."""
        if run.rc != 0:
            self.fail(run)
        if not isinstance(run.doc, dict):
            self.module.fail_json(msg="lume-unlock printed no JSON document",
                                  rc=run.rc,
                                  stdout=run.stdout,
                                  stderr=run.stderr)
        return run.doc


def lock_holder(message):
    """The holder a lock timeout names ("pid 42 ('lume-unlock pull tahoe', started …)")."""
    if "is busy" not in message and "still held" not in message:
        return None
    found = _HOLDER.search(message)
    return found.group(1).strip() if found else None


def differing_items(doc):
    """The items of a status/verify report that differ: [{item, expected, found}]."""
    items = doc.get("items", []) if isinstance(doc, dict) else []
    return [{"item": i.get("item"), "expected": i.get("expected"), "found": i.get("found")}
            for i in items if not i.get("ok", True)]


def drift_message(vm, differing, what="drift"):
    names = ", ".join(i["item"] for i in differing) or "(no item named)"
    return "%s in VM '%s': %d item(s) differ: %s" % (what, vm, len(differing), names)


def plan_text(doc):
    """The --dry-run plan as lines for the module's diff ("[to do] image: …")."""
    lines = []
    if "steps" in doc:
        for step in doc["steps"]:
            in_place = step.get("in_place")
            mark = "[check]" if in_place is None else ("[in place]" if in_place else "[to do]")
            line = "%s %s: %s" % (mark, step.get("id"), step.get("description"))
            if step.get("observed"):
                line += " (%s)" % step["observed"]
            lines.append(line)
    return "\n".join(lines) + ("\n" if lines else "")
