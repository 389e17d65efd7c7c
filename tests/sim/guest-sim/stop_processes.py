#!/usr/bin/env python3
"""guest-sim stop's process sweep: ends sshd, its per-connection children (they survive the
listener), the fake launchctl's jobs and, as root, whatever the DIR's dedicated user still runs;
all by PID, SIGTERM first and SIGKILL after 3 s.

usage: stop_processes.py DIR USER   (USER empty when guest-sim ran unprivileged)
"""
import json
import os
import pwd
import signal
import sys
import time


def parents():
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                table[int(entry)] = int(fields[1])
            except OSError:
                pass
    return table


def descendants(root, table):
    found, frontier = {root}, [root]
    while frontier:
        p = frontier.pop()
        for child, parent in table.items():
            if parent == p and child not in found:
                found.add(child)
                frontier.append(child)
    return found


def launchd_jobs(sim_dir):
    """The pid and supervisor_pid of every job record under DIR/launchd."""
    for root, _, files in os.walk(os.path.join(sim_dir, "launchd")):
        for name in files:
            if name.endswith(".json"):
                try:
                    with open(os.path.join(root, name)) as f:
                        record = json.load(f)
                except (OSError, ValueError):
                    continue
                for key in ("pid", "supervisor_pid"):
                    if record.get(key):
                        yield record[key]


def targets(sim_dir, user):
    found = set()
    table = parents()
    try:
        with open(os.path.join(sim_dir, "run", "guest-sim.pid")) as f:
            sshd = int(f.read().strip())
        if sshd in table:
            found |= descendants(sshd, table)
    except (OSError, ValueError):
        pass
    for pid in launchd_jobs(sim_dir):
        if pid in table:
            found |= descendants(pid, table)
    if user:  # the dedicated user is unique to this DIR: whatever it still runs belongs to us
        try:
            uid = pwd.getpwnam(user).pw_uid
            for pid in table:
                try:
                    if os.stat(f"/proc/{pid}").st_uid == uid:
                        found.add(pid)
                except OSError:
                    pass
        except KeyError:
            pass
    found.discard(os.getpid())
    return found


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main():
    pids = targets(sys.argv[1], sys.argv[2])
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.time() + 3
        while time.time() < deadline and any(alive(p) for p in pids):
            time.sleep(0.02)
        if not any(alive(p) for p in pids):
            break


if __name__ == "__main__":
    main()
