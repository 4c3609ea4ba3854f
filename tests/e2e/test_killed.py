#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Root suites killed with SIGKILL leave the machine as it was.

    test_killed.py BUILD_DIR [SUITE...]

Each suite that adds users, groups or PAM files (SUITES but package, or
the SUITEs named: package builds the package first, one to three minutes
before it adds anything, so it is killed only when named) is started as meson starts it (its command and environment from
`meson introspect --tests`), in a session of its own, with TMPDIR a
directory of this test's.  Once one of its processes sees, through
/proc/PID/root, an /etc whose accounts or PAM files differ from the
machine's (it has added them, wherever that is), it runs a random time
more, and then its whole session is killed with SIGKILL, as meson's
timeout kills it: no cleanup of its own runs.  Then:

- /etc/passwd, shadow, group, gshadow, subuid, subgid, every file under
  /etc/pam.d and /etc/ssh, and /etc/sudoers with /etc/sudoers.d are byte
  for byte (SHA-256, mode and owner) what they were before it started;
- no process is left: none in its session, none in a mount or PID
  namespace that one of its processes was in, none of its orphans (this
  test is their subreaper, so a process that left the session is found);
- no mount is left in the machine's mount table, no loop device attached,
  and (for a suite in a private root, tests/lib/root.sh) nothing in its
  TMPDIR.

A suite that adds its accounts to the machine's /etc and removes them on
exit fails the first; one whose processes outlive it (timeout(1), setsid)
the second; one that names a network namespace on the machine the third.
What a failing suite changed in those files is put back, and what it left
running is killed, so that even a failing run leaves the machine as it was.

Root only (SKIP otherwise), and not for a sanitizer build (the suites say
SKIP there at once, so nothing would be killed in the middle).
"""
import ctypes
import hashlib
import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "boot"))
import tap  # noqa: E402

FACTOR = float(os.environ.get("DURESS_TIMEOUT_FACTOR", "1"))


class Suite:
    """NAME: meson's test name; SEEN: seconds (times FACTOR) within which its
    accounts or PAM files must appear; MORE: at most this many seconds after
    that, at random, the kill (less than it keeps them); PRIVATE: it runs in
    a private root, so that even its temporary directory goes with it; ENV:
    added to its environment; NAMED: killed only when named."""

    def __init__(self, name, seen, more, private=True, env=None, named=False):
        self.name, self.seen, self.more, self.private = name, seen, more, private
        self.env, self.named = env or {}, named


SUITES = [
    Suite("e2e", 60, 20),
    Suite("sign-user", 30, 1),
    Suite("demo", 90, 2),
    Suite("examples-e2e", 60, 10),
    Suite("example-self-uninstall", 30, 0.5),
    # It builds the package first; without the 0.1.0 package (no such
    # commit: that part says SKIP) it adds its account sooner.
    Suite("package", 300, 5, private=False, env={"DURESS_OLD_COMMIT": "0" * 40}, named=True),
]
ACCOUNT_FILES = ["passwd", "shadow", "group", "gshadow", "subuid", "subgid", "sudoers"]
TREES = ["pam.d", "ssh", "sudoers.d"]


def watched():
    """The paths of the machine's files a suite must leave as they were."""
    paths = [os.path.join("/etc", f) for f in ACCOUNT_FILES]
    for t in TREES:
        for d, _, files in os.walk(os.path.join("/etc", t)):
            paths += [os.path.join(d, f) for f in files]
    return sorted(paths)


def snapshot():
    """Path => (SHA-256 or link target, mode, uid, gid) or None (absent), of the watched files."""
    out = {}
    for p in watched():
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            out[p] = None
            continue
        if stat.S_ISLNK(st.st_mode):
            content = os.readlink(p)
        else:
            with open(p, "rb") as f:
                content = hashlib.sha256(f.read()).hexdigest()
        out[p] = (content, st.st_mode, st.st_uid, st.st_gid)
    return out


def keep_copies():
    """Path => (bytes, stat) of the watched files, to put back what a failing suite changed."""
    copies = {}
    for p in watched():
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as f:
                copies[p] = (f.read(), os.stat(p))
    return copies


def put_back(copies, changed):
    """Each changed file as it was (atomically, by rename); one the suite added, removed."""
    for p in changed:
        if p not in copies:
            if os.path.lexists(p):
                os.unlink(p)
            continue
        data, st = copies[p]
        tmp = p + ".test-killed"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chown(tmp, st.st_uid, st.st_gid)
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.rename(tmp, p)


def accounts_view(root):
    """What says whether ROOT's /etc has a suite's accounts or PAM files: passwd, group, pam.d."""
    etc = os.path.join(root, "etc")
    out = []
    for f in ("passwd", "group"):
        with open(os.path.join(etc, f), "rb") as fh:
            out.append(fh.read())
    names = sorted(os.listdir(os.path.join(etc, "pam.d")))
    out.append(names)
    for name in names:
        with open(os.path.join(etc, "pam.d", name), "rb") as fh:
            out.append(hashlib.sha256(fh.read()).digest())
    return out


def processes():
    """PID => (session, mount namespace, PID namespace, parent, start time) of every process."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[int(pid)] = (os.getsid(int(pid)), os.readlink(f"/proc/{pid}/ns/mnt"),
                             os.readlink(f"/proc/{pid}/ns/pid"), int(fields[1]), int(fields[19]))
        except (OSError, IndexError, ValueError):
            pass
    return out


def become_subreaper():
    """Orphans of the suites become this process's children, not init's (PR_SET_CHILD_SUBREAPER):
    a process that left its session (setsid) and its parent is still found among them."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        tap.bail("PR_SET_CHILD_SUBREAPER", os.strerror(ctypes.get_errno()))


def reap():
    """Collects the orphans that have ended (zombies are not left processes)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def mounts():
    """The machine's mount table: (mount point, file system, source) of each mount."""
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
        rows = [line.split() for line in f]
    return {(r[4], r[r.index("-") + 1], r[r.index("-") + 2]) for r in rows}


def loops():
    """The attached loop devices, each with its backing file."""
    out = set()
    for dev in os.listdir("/sys/block"):
        try:
            with open(f"/sys/block/{dev}/loop/backing_file", encoding="utf-8") as f:
                out.add(f"{dev} {f.read().strip()}")
        except OSError:
            pass
    return out


class Watch:
    """The processes of a suite's session and the namespaces they were in."""

    def __init__(self, sid):
        self.sid = sid
        mine = processes()[os.getpid()]
        self.ours = {mine[1], mine[2]}
        self.namespaces = set()
        self.at_kill = None

    def freeze(self):
        """Just before the kill: the processes alive then, (PID, start time).  Only they can be
        left in the suite's session or namespaces: a namespace's number is used again once
        it is gone (a test alongside then unshares one), and so is a session's."""
        self.at_kill = {(pid, info[4]) for pid, info in processes().items()}

    def poll(self):
        """One PID of the session's in each of their mount namespaces, which are remembered (but ours)."""
        views = {}
        for pid, (sid, mnt, pidns, _, _) in processes().items():
            if sid == self.sid:
                views.setdefault(mnt, pid)
                self.namespaces |= {mnt, pidns} - self.ours
        return views.values()

    def left(self):
        """PIDs in the session, in one of the namespaces its processes were in, or
        descending from this process (orphans, through the subreaper) once the suite has ended."""
        reap()
        procs = processes()
        mine = {os.getpid()}
        grew = True
        while grew:
            more = {pid for pid, info in procs.items() if info[3] in mine} - mine
            mine |= more
            grew = bool(more)

        def was_there(pid, start):
            return self.at_kill is None or (pid, start) in self.at_kill

        return sorted(pid for pid, (sid, mnt, pidns, _, start) in procs.items()
                      if pid != os.getpid() and (pid in mine or (was_there(pid, start) and (
                          sid == self.sid or mnt in self.namespaces or pidns in self.namespaces))))


def in_place(pids, machine):
    """Whether one of PIDS sees accounts or PAM files that the machine's /etc did not have (MACHINE)."""
    for pid in pids:
        try:
            if accounts_view(f"/proc/{pid}/root") != machine:
                return True
        except OSError:
            pass
    return False


def run_until_killed(test, suite, tmpdir, machine):
    """Starts the suite; once its accounts are in place and a random time more, kills its session.
    Returns (seconds to the kill, whether they were seen, whether it ended first, its output, Watch)."""
    env = dict(os.environ)
    env.update(test["env"])
    env.update(suite.env)
    env["TMPDIR"] = tmpdir
    out = tempfile.TemporaryFile()
    start = time.monotonic()
    p = subprocess.Popen(test["cmd"], env=env, cwd=test["workdir"] or None, start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    watch = Watch(p.pid)
    seen_at = None
    deadline = start + suite.seen * FACTOR
    while p.poll() is None and time.monotonic() < deadline:
        if in_place(watch.poll(), machine):
            seen_at = time.monotonic()
            break
        time.sleep(0.05)
    if seen_at is not None:
        end = seen_at + random.uniform(0, suite.more)
        while p.poll() is None and time.monotonic() < end:
            watch.poll()
            time.sleep(0.05)
    ended_first = p.poll() is not None
    watch.freeze()
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    killed_at = time.monotonic() - start
    p.wait()
    # What died with it is gone within a moment; what is left after that was left.
    for _ in range(int(50 * FACTOR)):
        if not watch.left():
            break
        time.sleep(0.1)
    out.seek(0)
    return killed_at, seen_at is not None, ended_first, out.read().decode(errors="replace"), watch


def describe(pids):
    """PID: command line, one a line."""
    lines = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                lines.append(f"{pid}: " + f.read().replace(b"\0", b" ").decode(errors="replace")[:200])
        except OSError:
            pass
    return "\n".join(lines)


def kill_suite(test, suite):
    """One suite: started, killed, the machine compared; what it changed put back."""
    name = suite.name
    before, copies = snapshot(), keep_copies()
    machine = accounts_view("/")
    mounts_before, loops_before = mounts(), loops()
    tmpdir = tempfile.mkdtemp(prefix=f"killed-{name}.")
    os.chmod(tmpdir, 0o755)
    try:
        at, seen, ended_first, out, watch = run_until_killed(test, suite, tmpdir, machine)
        if not seen and ended_first and "1..0 # SKIP" in out:
            tap.skip(f"{name}: killed while its accounts are in place", out.strip().splitlines()[0])
            return
        what = f"{name} killed after {at:.1f} s"
        tap.ok(seen, f"{what}: its accounts or PAM files were in place (seen through /proc/PID/root)",
               "none within the time, or it ended first\n--- its output:\n" + out[-2000:])
        if ended_first:
            tap.comment(f"{name} ended before its kill: the kill proves less this time")
        after = snapshot()
        changed = [p for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)]
        tap.ok(not changed, f"{what}: accounts, PAM, sudo and ssh files byte for byte as before",
               "changed (now put back): " + ", ".join(changed) + "\n--- its output:\n" + out[-2000:])
        put_back(copies, changed)
        left = watch.left()
        tap.ok(not left, f"{what}: no process of it left", describe(left))
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        new_mounts = sorted(mounts() - mounts_before)
        tap.ok(not new_mounts, f"{what}: no mount of it left on the machine",
               "\n".join(" ".join(m) for m in new_mounts))
        new_loops = sorted(loops() - loops_before)
        tap.ok(not new_loops, f"{what}: no loop device of it left", "\n".join(new_loops))
        files = sorted(os.path.join(d, f) for d, dirs, fs in os.walk(tmpdir) for f in fs + dirs)
        if suite.private:
            tap.ok(not files, f"{what}: nothing left in its temporary directory ({len(files)})",
                   "\n".join(files[:20]))
        elif files:
            tap.comment(f"{name} is not in a private root: {len(files)} files left in its "
                        "temporary directory, removed here")
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def main():
    if os.geteuid() != 0:
        tap.skip_all("needs root: the suites it kills add accounts")
    if os.environ.get("DURESS_PRELOAD_ASAN"):
        tap.skip_all("sanitizer step: the killed suites say SKIP at once")
    tests = json.loads(subprocess.run(["meson", "introspect", sys.argv[1], "--tests"],
                                      check=True, capture_output=True, text=True).stdout)
    become_subreaper()
    by_name = {t["name"]: t for t in tests}
    wanted = sys.argv[2:] or [s.name for s in SUITES if not s.named]
    for suite in SUITES:
        if suite.name not in wanted:
            continue
        if suite.name not in by_name:
            tap.ok(False, f"{suite.name}: a test of this build", "not in meson introspect --tests")
            continue
        kill_suite(by_name[suite.name], suite)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
