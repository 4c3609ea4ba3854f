#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Root suites killed with SIGKILL leave the machine's accounts and PAM files as they were.

    test_killed.py BUILD_DIR

Each suite that adds users, groups or PAM files (SUITES) is started as meson
would start it (its command and environment from `meson introspect --tests`),
in a session of its own, and its whole session is killed with SIGKILL after a
random delay within the window where it has them in place: no cleanup of its
own runs.  Then /etc/passwd, /etc/shadow, /etc/group, /etc/gshadow and every
file under /etc/pam.d must be byte for byte what they were before it started,
and no process of its session may be left.  On a suite that adds its accounts
to the real /etc and removes them on exit, this fails.

Root only (SKIP otherwise), and not for a sanitizer build (the suites say
SKIP there at once, so nothing would be killed in the middle).
"""
import json
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "boot"))
import tap  # noqa: E402

# Suite => (earliest, latest) kill, in seconds after its start: after its
# accounts and PAM files are in place, before its own end on a quiet machine.
SUITES = {
    "e2e": (3, 25),
    "sign-user": (1, 3),
    "examples-e2e": (2, 8),
    "package": (5, 30),
    "example-self-uninstall": (1, 4),
}
WATCHED = ["/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"]


def snapshot():
    """Path => (bytes, mode) or None (absent), for the watched files and everything under /etc/pam.d."""
    paths = list(WATCHED)
    for d, _, files in os.walk("/etc/pam.d"):
        paths += [os.path.join(d, f) for f in files]
    out = {}
    for p in sorted(paths):
        try:
            with open(p, "rb") as f:
                out[p] = (f.read(), os.fstat(f.fileno()).st_mode)
        except FileNotFoundError:
            out[p] = None
    return out


def differences(before, after):
    return [p for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)]


def put_back(before, changed):
    """A suite that failed here must not leave the machine so: each file as it was, atomically."""
    for p in changed:
        if before.get(p) is None:
            os.unlink(p)
            continue
        data, mode = before[p]
        tmp = p + ".test-killed"
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode & 0o7777), "wb") as f:
            f.write(data)
        st = os.stat(p) if os.path.exists(p) else None
        if st:
            os.chown(tmp, st.st_uid, st.st_gid)
        os.rename(tmp, p)


def session_left(sid):
    """PIDs of processes still in session SID."""
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getsid(int(pid)) == sid:
                left.append(int(pid))
        except OSError:
            pass
    return left


def kill_at_random(test, window):
    """Starts TEST in a session of its own, kills the session at a random point of WINDOW."""
    env = dict(os.environ)
    env.update(test["env"])
    delay = random.uniform(*window) * float(os.environ.get("DURESS_TIMEOUT_FACTOR", "1"))
    p = subprocess.Popen(test["cmd"], env=env, cwd=test["workdir"] or None, start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    time.sleep(delay)
    ended_first = p.poll() is not None
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    out = p.communicate()[0].decode(errors="replace")
    # What was in the session and died with it goes within a moment.
    for _ in range(50):
        if not session_left(p.pid):
            break
        time.sleep(0.1)
    return delay, ended_first, out, session_left(p.pid)


def main():
    if os.geteuid() != 0:
        tap.skip_all("needs root: the suites it kills add accounts")
    if os.environ.get("DURESS_PRELOAD_ASAN"):
        tap.skip_all("sanitizer step: the killed suites say SKIP at once")
    tests = json.loads(subprocess.run(["meson", "introspect", sys.argv[1], "--tests"],
                                      check=True, capture_output=True, text=True).stdout)
    by_name = {t["name"]: t for t in tests}
    for name, window in SUITES.items():
        if name not in by_name:
            tap.ok(False, f"{name}: a test of this build", "not in meson introspect --tests")
            continue
        before = snapshot()
        delay, ended_first, out, left = kill_at_random(by_name[name], window)
        after = snapshot()
        what = f"{name} killed after {delay:.1f} s"
        if ended_first:
            tap.comment(f"{name} ended before its kill: the kill proves less this time")
        changed = differences(before, after)
        tap.ok(not changed, f"{what}: accounts and PAM files byte for byte as before",
               "changed (now put back): " + ", ".join(changed) + "\n--- its output:\n" + out[-2000:])
        put_back(before, changed)
        tap.ok(not left, f"{what}: no process of it left", f"left: {left}")
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
