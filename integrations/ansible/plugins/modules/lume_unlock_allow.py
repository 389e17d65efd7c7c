#!/usr/bin/python
# -*- coding: utf-8 -*-
# The allowlist of a VM: which programs in its guest get the Metal capability shim.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: lume_unlock_allow
short_description: Manage which programs of a Lume VM get the lume-unlock shim
description:
  - Adds or removes enablement entries of a VM provisioned by lume-unlock, with
    C(lume-unlock allow add) and C(lume-unlock allow remove), each of which re-applies the
    enablement list in the guest (agents, guard file) and rolls back on failure.
  - C(changed) is lume-unlock's own report, an entry that is already applied as given changes nothing.
  - In check mode every command runs with C(--dry-run); what would change is returned as
    C(changes) and as the module's diff.
version_added: "0.1.0"
author:
  - lume-unlock contributors
options:
  name:
    description:
      - The Lume VM.
    type: str
    required: true
  entries:
    description:
      - The enablement entries. With I(state=absent) only their I(name) is used.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description:
          - Entry name, C([a-z0-9][a-z0-9-]{0,62}); its agent is C(dev.lume-unlock.<name>).
        type: str
        required: true
      program:
        description:
          - Absolute path of the program in the guest. Required with I(state=present).
        type: str
      args:
        description:
          - Arguments, passed verbatim.
        type: list
        elements: str
        default: []
      env:
        description:
          - Extra environment of the program.
        type: dict
        default: {}
      agent:
        description:
          - Run it as a LaunchAgent. When false it is only listed in the guard file and run with
            C(lume-unlock exec).
        type: bool
        default: true
      keep_alive:
        description:
          - Let launchd restart the agent when it exits.
        type: bool
        default: true
  state:
    description:
      - C(present) adds (or updates) every entry, C(absent) removes every entry that is there.
    type: str
    choices: [present, absent]
    default: present
  exclusive:
    description:
      - With I(state=present), also remove every entry of the VM that I(entries) does not name,
        whatever its origin (recipe, baked image or C(allow)).
    type: bool
    default: false
extends_documentation_fragment:
  - lume_unlock.lume.common
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
'''

EXAMPLES = r'''
- name: Exactly these two programs get the shim
  lume_unlock.lume.lume_unlock_allow:
    name: tahoe-llm
    exclusive: true
    entries:
      - name: llama-server
        program: /opt/llama.cpp/bin/llama-server
        args: [--port, "8080"]
        env:
          GGML_METAL_NO_RESIDENCY: "1"
      - name: llama-bench
        program: /opt/llama.cpp/bin/llama-bench
        agent: false

- name: Take one program off the list
  lume_unlock.lume.lume_unlock_allow:
    name: tahoe-llm
    state: absent
    entries:
      - name: llama-bench
'''

RETURN = r'''
changes:
  description: What changed (or, in check mode, would change), as lume-unlock words it.
  returned: always
  type: list
  elements: str
added:
  description: Entries that C(allow add) changed.
  returned: always
  type: list
  elements: str
removed:
  description: Entries removed (by I(state=absent) or I(exclusive)).
  returned: always
  type: list
  elements: str
entries:
  description: The VM's entries before the module ran, as C(lume-unlock allow list) shows them.
  returned: always
  type: list
  elements: dict
lock_holder:
  description: Who held the VM's lock when I(lock_timeout) ran out.
  returned: on a lock timeout
  type: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.lume_unlock.lume.plugins.module_utils.lume_unlock import (
    COMMON_ARGS, LumeUnlock)


def add_command(vm, entry):
    if not entry.get("program"):
        raise ValueError("entry '%s' has no program (required with state=present)" % entry["name"])
    command = ["allow", "add", vm, entry["name"], "--program", entry["program"]]
    for arg in entry.get("args") or []:
        command.append("--arg=" + arg)
    for key in sorted(entry.get("env") or {}):
        command.append("--env=%s=%s" % (key, entry["env"][key]))
    if not entry.get("agent", True):
        command.append("--no-agent")
    elif not entry.get("keep_alive", True):
        command.append("--no-keep-alive")
    return command


def main():
    entry_spec = dict(
        name=dict(type="str", required=True),
        program=dict(type="str"),
        args=dict(type="list", elements="str", default=[]),
        env=dict(type="dict", default={}),
        agent=dict(type="bool", default=True),
        keep_alive=dict(type="bool", default=True),
    )
    argument_spec = dict(
        name=dict(type="str", required=True),
        entries=dict(type="list", elements="dict", options=entry_spec, default=[]),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        exclusive=dict(type="bool", default=False),
    )
    argument_spec.update(COMMON_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    lu = LumeUnlock(module)
    p = module.params
    vm = p["name"]
    dry = ["--dry-run"] if module.check_mode else []

    listed = lu.must(lu.run(["allow", "list", vm]))
    before = listed.get("enablement", [])
    present_names = [e.get("name") for e in before]
    wanted = [e["name"] for e in p["entries"]]
    changes, added, removed = [], [], []

    def record(doc, into, entry):
        # A run says "changed"; a dry run (check mode) is a plan that is not a no-op.
        if doc.get("changed") or doc.get("no_op") is False:
            into.append(entry)
            changes.extend(doc.get("changes", []))

    if p["state"] == "present":
        for entry in p["entries"]:
            try:
                command = add_command(vm, entry)
            except ValueError as problem:
                module.fail_json(msg=str(problem), lume_unlock=lu.runs)
            record(lu.must(lu.run(command + dry)), added, entry["name"])
        stale = [n for n in present_names if n not in wanted] if p["exclusive"] else []
    else:
        stale = [n for n in wanted if n in present_names]
    for name in stale:
        record(lu.must(lu.run(["allow", "remove", vm, name] + dry)), removed, name)

    changed = bool(added or removed)
    module.exit_json(changed=changed,
                     changes=changes,
                     added=added,
                     removed=removed,
                     entries=before,
                     diff={"prepared": "".join(c + "\n" for c in changes)},
                     lume_unlock=lu.runs)


if __name__ == "__main__":
    main()
