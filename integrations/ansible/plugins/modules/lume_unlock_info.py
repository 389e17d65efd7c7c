#!/usr/bin/python
# -*- coding: utf-8 -*-
# What lume-unlock knows of a VM (its provenance record) and how the guest compares with it now.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: lume_unlock_info
short_description: The lume-unlock record and status of a Lume VM, as facts
description:
  - Runs C(lume-unlock status NAME) and returns the VM's provenance record (image digest, shim
    bundle and file hashes, enablement) and the comparison of the guest with it, as the fact
    C(lume_unlock) and as return values. Changes nothing.
  - Drift is reported, not failed on (C(drift=true) with the C(differing) items); use
    M(lume_unlock.lume.lume_unlock_vm) with I(state=verified) to fail on it.
version_added: "0.1.0"
author:
  - lume-unlock contributors
options:
  name:
    description:
      - The Lume VM.
    type: str
    required: true
extends_documentation_fragment:
  - lume_unlock.lume.common
attributes:
  check_mode:
    support: full
'''

EXAMPLES = r'''
- name: Read the record and status of the VM
  lume_unlock.lume.lume_unlock_info:
    name: tahoe-llm
- name: Show the digest it runs
  ansible.builtin.debug:
    var: lume_unlock.record.image.digest
'''

RETURN = r'''
ansible_facts:
  description: C(lume_unlock), with C(vm), C(record), C(drift), C(items) and C(differing).
  returned: success
  type: dict
record:
  description: The VM's provenance record (lume-unlock's C(provenance.json)).
  returned: success
  type: dict
drift:
  description: Whether anything in the guest differs from the record.
  returned: success
  type: bool
differing:
  description: The items that differ, each with C(item), C(expected) and C(found).
  returned: success
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.lume_unlock.lume.plugins.module_utils.lume_unlock import (
    COMMON_ARGS, EXIT_VERIFICATION, LumeUnlock, differing_items)


def main():
    argument_spec = dict(name=dict(type="str", required=True))
    argument_spec.update(COMMON_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    lu = LumeUnlock(module)
    run = lu.run(["status", module.params["name"]])
    drifted = run.rc == EXIT_VERIFICATION and isinstance(run.doc, dict) and "items" in run.doc
    doc = run.doc if drifted else lu.must(run)
    facts = {
        "vm": module.params["name"],
        "record": doc.get("record"),
        "drift": bool(doc.get("drift")),
        "items": doc.get("items", []),
        "differing": differing_items(doc),
    }
    module.exit_json(changed=False,
                     ansible_facts={"lume_unlock": facts},
                     record=facts["record"],
                     drift=facts["drift"],
                     differing=facts["differing"],
                     lume_unlock=lu.runs)


if __name__ == "__main__":
    main()
