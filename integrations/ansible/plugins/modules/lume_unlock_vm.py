#!/usr/bin/python
# -*- coding: utf-8 -*-
# A Lume VM provisioned by lume-unlock: created from a recipe or pulled from a pinned, baked
# image and verified; removed; or checked against its record.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: lume_unlock_vm
short_description: Provision, verify or remove a Lume VM with lume-unlock
description:
  - Runs C(lume-unlock) on the managed host (the Mac that runs Lume) and reports what it did.
  - C(changed) is lume-unlock's own account, a plan in which every step is already in place
    reports C(changed=false).
  - In check mode the command runs with C(--dry-run) and its plan is returned as C(plan) and as
    the module's diff.
version_added: "0.1.0"
author:
  - lume-unlock contributors
options:
  name:
    description:
      - The Lume VM (C([A-Za-z0-9._-])).
    type: str
    required: true
  state:
    description:
      - C(present) with I(recipe) runs C(lume-unlock create NAME --recipe RECIPE).
      - C(present) with I(reference) runs C(lume-unlock pull REFERENCE NAME --verify), the guest
        checked against the record baked into the image (C(--dry-run) in check mode, without the check).
      - C(absent) runs C(lume-unlock remove NAME), with C(--delete-vm) when I(delete_vm) is set.
      - C(verified) runs C(lume-unlock status NAME) and C(lume-unlock verify NAME) and changes
        nothing. Drift or a failed probe (exit 6) fails the task with the differing items.
    type: str
    choices: [present, absent, verified]
    default: present
  recipe:
    description:
      - Image recipe (YAML) on the managed host, for I(state=present). Mutually exclusive with
        I(reference).
    type: path
  reference:
    description:
      - A baked image pinned by digest (C(registry/org/name@sha256:<hex>)), for I(state=present).
        Mutually exclusive with I(recipe).
      - A tag alone is refused, a fleet must get the same bytes on every host.
    type: str
  from:
    description:
      - With I(recipe), a stopped golden VM on the same host that C(lume-unlock verify) passed.
        NAME is cloned from it through Lume (C(create NAME --recipe RECIPE --from FROM)), no
        image pulled, then converged as C(create) would, and NAME gets its own SSH key.
      - The golden VM must have been made from the same recipe, otherwise the task fails (exit 2)
        and nothing is made. In check mode the plan shows the C(clone) step it would take.
    type: str
    aliases: [clone_from]
  bundle:
    description:
      - The shim bundle for C(create) (C(--bundle)), a directory, archive or C(REF@sha256:<hex>).
    type: str
  exclusive:
    description:
      - With I(recipe), C(create --exclusive), which removes the enablement entries added with
        C(lume-unlock allow).
    type: bool
    default: false
  delete_vm:
    description:
      - With I(state=absent), also delete the VM through Lume (C(remove --delete-vm)).
    type: bool
    default: false
  boot_timeout:
    description:
      - With I(reference), seconds the VM may take to boot with SSH open (C(pull --boot-timeout)).
    type: int
  ssh_wait:
    description:
      - Seconds to retry the first SSH login (C(--ssh-wait) of C(create) and C(pull)).
    type: int
  llama_log:
    description:
      - With I(state=verified), a llama.cpp log on the managed host that C(verify --llama-log)
        classifies as well.
    type: path
extends_documentation_fragment:
  - lume_unlock.lume.common
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
'''

EXAMPLES = r'''
- name: Pull the baked image and check the guest against its record
  lume_unlock.lume.lume_unlock_vm:
    name: tahoe-llm
    reference: ghcr.io/acme/tahoe-llm@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    lock_timeout: 120

- name: Create from a recipe
  lume_unlock.lume.lume_unlock_vm:
    name: tahoe-llm
    recipe: /opt/lume-unlock/image-recipes/tahoe-llm.yaml

- name: Clone a worker from the host's stopped, verified golden VM (seconds, nothing pulled)
  lume_unlock.lume.lume_unlock_vm:
    name: tahoe-llm-worker-1
    recipe: /opt/lume-unlock/image-recipes/tahoe-llm.yaml
    from: tahoe-llm-golden

- name: Check the guest against its record and probe it
  lume_unlock.lume.lume_unlock_vm:
    name: tahoe-llm
    state: verified

- name: Leave the guest stock and delete the VM
  lume_unlock.lume.lume_unlock_vm:
    name: tahoe-llm
    state: absent
    delete_vm: true
'''

RETURN = r'''
plan:
  description: The plan lume-unlock printed for C(--dry-run) (check mode).
  returned: in check mode
  type: dict
result:
  description: lume-unlock's C(--json) document of the command that did the work.
  returned: success
  type: dict
digest:
  description: The image digest the VM holds (I(reference)).
  returned: when I(reference) is set
  type: str
differing:
  description: The items that differ from the record, each with C(item), C(expected) and C(found).
  returned: on drift or a failed verification (exit 6)
  type: list
  elements: dict
lock_holder:
  description: Who held the VM's lock when I(lock_timeout) ran out.
  returned: on a lock timeout
  type: str
lume_unlock:
  description: Every lume-unlock command run, with its exit code.
  returned: always
  type: list
  elements: dict
'''

import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.lume_unlock.lume.plugins.module_utils.lume_unlock import (
    COMMON_ARGS, EXIT_VERIFICATION, LumeUnlock, differing_items, drift_message, plan_text)

_PINNED = re.compile(r"@sha256:[0-9a-f]{64}$")


def fail_drift(lu, run, vm, report, what):
    differing = differing_items(report)
    lu.module.fail_json(msg=drift_message(vm, differing, what),
                        rc=run.rc,
                        differing=differing,
                        result=run.doc,
                        lume_unlock=lu.runs)


def dry_run(lu, command):
    doc = lu.must(lu.run(command + ["--dry-run"]))
    if doc.get("conflict"):
        # The real run would fail on it: so does check mode.
        lu.module.fail_json(msg=doc["conflict"], plan=doc, lume_unlock=lu.runs)
    lu.module.exit_json(changed=not doc.get("no_op", False),
                        plan=doc,
                        diff={"prepared": plan_text(doc)},
                        lume_unlock=lu.runs)


def present_from_reference(lu, p):
    if not _PINNED.search(p["reference"]):
        lu.module.fail_json(msg="reference '%s' is not pinned: give it as REF@sha256:<hex> (what "
                            "'lume-unlock bake' prints), so every host gets the same bytes"
                            % p["reference"])
    command = ["pull", p["reference"], p["name"]]
    if lu.module.check_mode:
        dry_run(lu, command)
    command.append("--verify")
    if p["boot_timeout"] is not None:
        command += ["--boot-timeout", str(p["boot_timeout"])]
    if p["ssh_wait"] is not None:
        command += ["--ssh-wait", str(p["ssh_wait"])]
    run = lu.run(command)
    if run.rc == EXIT_VERIFICATION and isinstance(run.doc, dict) and "verify" in run.doc:
        fail_drift(lu, run, p["name"], run.doc["verify"], "not verified against the baked record")
    doc = lu.must(run)
    lu.module.exit_json(changed=bool(doc.get("changed")),
                        result=doc,
                        digest=doc.get("digest"),
                        lume_unlock=lu.runs)


def present_from_recipe(lu, p):
    command = ["create", p["name"], "--recipe", p["recipe"]]
    if p["from"]:
        command += ["--from", p["from"]]
    if p["bundle"]:
        command += ["--bundle", p["bundle"]]
    if p["exclusive"]:
        command.append("--exclusive")
    if lu.module.check_mode:
        dry_run(lu, command)
    if p["ssh_wait"] is not None:
        command += ["--ssh-wait", str(p["ssh_wait"])]
    doc = lu.must(lu.run(command))
    lu.module.exit_json(changed=doc.get("changed", 0) > 0, result=doc, lume_unlock=lu.runs)


def absent(lu, p):
    command = ["remove", p["name"]]
    if p["delete_vm"]:
        command.append("--delete-vm")
    if lu.module.check_mode:
        dry_run(lu, command)
    doc = lu.must(lu.run(command))
    lu.module.exit_json(changed=doc.get("changed", 0) > 0, result=doc, lume_unlock=lu.runs)


def verified(lu, p):
    status = lu.run(["status", p["name"]])
    if status.rc == EXIT_VERIFICATION and isinstance(status.doc, dict) and "items" in status.doc:
        fail_drift(lu, status, p["name"], status.doc, "drift")
    status_doc = lu.must(status)
    command = ["verify", p["name"]]
    if p["llama_log"]:
        command += ["--llama-log", p["llama_log"]]
    verify = lu.run(command)
    verify_doc = lu.must(verify)
    lu.module.exit_json(changed=False,
                        result={"status": status_doc, "verify": verify_doc},
                        lume_unlock=lu.runs)


def main():
    argument_spec = dict(
        name=dict(type="str", required=True),
        state=dict(type="str", default="present", choices=["present", "absent", "verified"]),
        recipe=dict(type="path"),
        reference=dict(type="str"),
        **{"from": dict(type="str", aliases=["clone_from"])},
        bundle=dict(type="str"),
        exclusive=dict(type="bool", default=False),
        delete_vm=dict(type="bool", default=False),
        boot_timeout=dict(type="int"),
        ssh_wait=dict(type="int"),
        llama_log=dict(type="path"),
    )
    argument_spec.update(COMMON_ARGS)
    module = AnsibleModule(argument_spec=argument_spec,
                           mutually_exclusive=[("recipe", "reference"), ("from", "reference")],
                           required_if=[("state", "present", ("recipe", "reference"), True)],
                           supports_check_mode=True)
    lu = LumeUnlock(module)
    p = module.params
    if p["state"] == "present":
        if p["reference"]:
            present_from_reference(lu, p)
        present_from_recipe(lu, p)
    elif p["state"] == "absent":
        absent(lu, p)
    verified(lu, p)


if __name__ == "__main__":
    main()
