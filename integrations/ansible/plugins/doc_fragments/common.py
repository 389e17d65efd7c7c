# -*- coding: utf-8 -*-
# The options every lume_unlock.lume module shares: where lume-unlock is, which Lume and state
# directory it works with, how long it waits for another run on the same VM, how it reaches the guest.
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  binary:
    description:
      - The lume-unlock command on the managed host, a name looked up on C(PATH) or a full path.
    type: str
    default: lume-unlock
  lume_url:
    description:
      - Lume's HTTP API, passed as C(--lume-url).
      - When unset, lume-unlock uses C($LUME_API_URL), else C(http://127.0.0.1:7777).
    type: str
  state_dir:
    description:
      - lume-unlock's state directory (records, per-VM keys, locks), passed as C(--state-dir).
      - When unset, lume-unlock uses C($LUME_UNLOCK_STATE_DIR), else C(~/.lume-unlock).
    type: path
  lock_timeout:
    description:
      - Seconds to wait while another lume-unlock run changes the same VM, passed as C(--lock-timeout).
      - When it runs out, the task fails with lume-unlock's message, which names the holder
        (also returned as C(lock_holder)). Unset, lume-unlock waits 60 seconds.
    type: float
  ssh_user:
    description:
      - The guest user lume-unlock logs in as (C(--ssh-user)); lume-unlock's default is C(lume).
    type: str
  ssh_port:
    description:
      - The guest's SSH port (C(--ssh-port)); lume-unlock's default is 22.
    type: int
  ssh_password:
    description:
      - The guest user's password, used only on first contact to install lume-unlock's per-VM key.
      - It is handed to lume-unlock in an environment variable (C(--ssh-password-env)), never on its
        command line, and is not logged.
      - When unset, lume-unlock reads C($LUME_UNLOCK_GUEST_PASSWORD), else tries the image default.
    type: str
notes:
  - The modules run C(lume-unlock --json) on the managed host, which is the Mac that runs Lume.
  - Exit codes of lume-unlock become failures whose C(msg) is lume-unlock's message; C(rc),
    C(category), C(hint) and C(stderr) are returned with them.
'''
