#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The terminal prompts of `duress sign` and `duress add`, driven through a
real pseudo-terminal.

- echo is off before the prompt is written: output is held with XOFF, so the
  prompt cannot appear; the echo must go off while it is held (the old order,
  prompt first, would wait for XON and never turn echo off);
- Ctrl-C (SIGINT through the terminal), SIGTERM and SIGHUP at either prompt
  end the command at once with 128 + the signal, echo back on, no .sig written;
- Ctrl-Z at a prompt waits until the line is read (a shell would not give
  the prompt its echo-off mode back after `fg`);
- the README's keystrokes for `duress add alert --set-file NTFY_URL=-`: the
  value pasted, Enter, Ctrl-D, then the two password prompts at the
  terminal, without echo (issue 25, item 6: the Ctrl-D answered the first
  prompt, and the second password went to the shell);
- `duress add`'s editor: one line says which editor, which file, and
  --no-edit before it opens; a hang-up (the terminal closed, or SIGHUP or
  SIGTERM for add) while it runs leaves nothing behind, or, with --force,
  what was there exactly as it was, and a rerun needs no --force (item 9).

Usage: test_prompt.py DURESS   ($DURESS_VALGRIND, if set, prefixes the command)
"""
import os
import pty
import pwd
import re
import select
import shlex
import signal
import subprocess
import sys
import tempfile
import termios
import time

DURESS = sys.argv[1]
WRAP = shlex.split(os.environ.get("DURESS_VALGRIND", ""))
# Generous for valgrind; a prompt that ignores the signal waits forever.
# Times DURESS_TIMEOUT_FACTOR (docs/testing.md) on a slower machine.
BOUND = (20.0 if WRAP else 5.0) * int(os.environ.get("DURESS_TIMEOUT_FACTOR", "1"))
XOFF, XON, INTR, SUSP, EOF = b"\x13", b"\x11", b"\x03", b"\x1a", b"\x04"

n = 0
failed = 0


def check(desc, cond):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, desc), flush=True)


def skip(desc, why):
    global n
    n += 1
    print("ok %d - %s # SKIP %s" % (n, desc, why), flush=True)


def default_signals():
    """In a child: the signals under test back to their defaults.  A test run
    from nohup, or in the background of a shell, inherits them ignored, and
    duress rightly keeps an ignored signal ignored."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def spawn(*args, gate=None, env=None):
    """The command on a new terminal; with gate, it waits for a byte there
    first; with env, those variables set (None: unset)."""
    pid, master = pty.fork()
    if pid == 0:
        default_signals()
        for name, value in (env or {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if gate is not None:
            os.read(gate, 1)
        argv = WRAP + [DURESS] + list(args)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    return pid, master


def spawn_job(*args):
    """As a shell with job control would: the command in a foreground group of
    its own whose parent stays in the session, so that Ctrl-Z can stop it.
    Returns the parent's pid, the terminal, the command's pid and what the
    terminal showed so far."""
    pid, master = pty.fork()
    if pid == 0:
        default_signals()
        job = os.fork()
        if job == 0:
            os.setpgid(0, 0)
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            os.tcsetpgrp(0, os.getpid())
            signal.signal(signal.SIGTTOU, signal.SIG_DFL)
            argv = WRAP + [DURESS] + list(args)
            try:
                os.execvp(argv[0], argv)
            finally:
                os._exit(127)
        os.write(1, b"job %d\n" % job)
        _, status = os.waitpid(job, 0)
        os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status)
                 else 128 + os.WTERMSIG(status))
    # The command's own output may come before that line.
    seen = read_match(master, rb"job (\d+)\r?\n", b"")
    found = re.search(rb"job (\d+)\r?\n", seen) if seen else None
    return pid, master, int(found.group(1)) if found else None, seen or b""


def state(pid):
    """The process's state letter in /proc: T when it is stopped."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def read_until(master, text, seen, bound=BOUND, mark=0):
    """Reads the terminal until text shows up (after seen[:mark]); returns
    what was read, or None."""
    return read_match(master, re.escape(text), seen, bound, mark)


def read_match(master, pattern, seen, bound=BOUND, mark=0):
    """Reads the terminal until pattern matches (after seen[:mark]); returns
    what was read, or None."""
    end = time.monotonic() + bound
    while not re.search(pattern, seen[mark:]):
        left = end - time.monotonic()
        if left <= 0 or not select.select([master], [], [], left)[0]:
            return None
        try:
            chunk = os.read(master, 4096)
        except OSError:
            return None
        if not chunk:
            return None
        seen += chunk
    return seen


def read_rest(master, seen, bound=BOUND):
    """Reads the terminal until the command closes it; all that was read."""
    end = time.monotonic() + bound
    while time.monotonic() < end and select.select([master], [], [], end - time.monotonic())[0]:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    return seen


def echo_on(master):
    # On Linux the master reports the terminal's (the slave's) settings.
    return bool(termios.tcgetattr(master)[3] & termios.ECHO)


def wait_bounded(pid, bound=BOUND):
    """The exit status (128 + N for death by signal N), or None if still running."""
    end = time.monotonic() + bound
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) \
                else 128 + os.WTERMSIG(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def drain(master):
    """Empties the terminal so that the child is never blocked writing to it."""
    try:
        while select.select([master], [], [], 0.1)[0] and os.read(master, 4096):
            pass
    except OSError:
        pass


def new_action(tmp, name):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\ntrue\n")
    os.chmod(path, 0o700)
    return path


def echo_off_before_prompt(tmp):
    action = new_action(tmp, "early")
    gate_r, gate_w = os.pipe()
    pid, master = spawn("sign", action, gate=gate_r)
    os.close(gate_r)
    # The terminal handles XOFF a moment after the write: hold output first.
    os.write(master, XOFF)
    time.sleep(0.2)
    os.write(gate_w, b"!")
    os.close(gate_w)
    end = time.monotonic() + BOUND
    while echo_on(master) and time.monotonic() < end:
        time.sleep(0.005)
    check("echo goes off while the prompt is still held back", not echo_on(master))
    held = b""
    if select.select([master], [], [], 0.2)[0]:
        held = os.read(master, 4096)
    check("the prompt is not shown before echo is off", b"Duress password:" not in held)
    os.write(master, XON)
    seen = read_until(master, b"Duress password: ", held)
    check("the prompt follows once output resumes", seen is not None)
    check("echo is still off at the prompt", not echo_on(master))
    os.kill(pid, signal.SIGKILL)
    drain(master)
    os.waitpid(pid, 0)
    os.close(master)


def interrupted(tmp, what, at_second, send):
    action = new_action(tmp, "act-%s-%d" % (what, at_second))
    pid, master = spawn("sign", action)
    seen = read_until(master, b"Duress password: ", b"")
    check("%s: the prompt appears" % what, seen is not None)
    if at_second:
        os.write(master, b"First-pw-1\n")
        seen = read_until(master, b"Again: ", seen or b"")
        check("%s: the second prompt appears" % what, seen is not None)
    # Half a password typed, then the signal.
    os.write(master, b"half-typ")
    time.sleep(0.1)
    start = time.monotonic()
    sig = send(pid, master)
    status = wait_bounded(pid)
    took = time.monotonic() - start
    where = "second prompt" if at_second else "prompt"
    check("%s at the %s: exits at once (%.2f s) with %d (got %s)"
          % (what, where, took, 128 + sig, status), status == 128 + sig)
    check("%s at the %s: echo is back on" % (what, where), echo_on(master))
    check("%s at the %s: no signature written" % (what, where),
          not os.path.exists(action + ".sig"))
    drain(master)
    os.close(master)


def ctrl_c(pid, master):
    os.write(master, INTR)
    return signal.SIGINT


def sigterm(pid, master):
    os.kill(pid, signal.SIGTERM)
    return signal.SIGTERM


def sighup(pid, master):
    os.kill(pid, signal.SIGHUP)
    return signal.SIGHUP


def suspend_held(tmp):
    action = new_action(tmp, "suspend")
    pid, master, job, seen = spawn_job("sign", action)
    seen = read_until(master, b"Duress password: ", seen) if job else None
    check("Ctrl-Z: the prompt appears", seen is not None)
    os.write(master, b"Half-")
    os.write(master, SUSP)
    time.sleep(0.3)
    check("Ctrl-Z at the prompt: not stopped there", state(job) != "T")
    check("Ctrl-Z at the prompt: echo still off", not echo_on(master))
    os.write(master, b"typed\n")
    if WRAP:
        # valgrind drops a stop signal that was pending while blocked.
        skip("Ctrl-Z: stopped once the line is read", "under valgrind")
        skip("Ctrl-Z: echo back on while stopped", "under valgrind")
    else:
        end = time.monotonic() + BOUND
        while state(job) != "T" and time.monotonic() < end:
            time.sleep(0.01)
        check("Ctrl-Z: stopped once the line is read", state(job) == "T")
        check("Ctrl-Z: echo back on while stopped", echo_on(master))
        os.kill(job, signal.SIGCONT)
    seen = read_until(master, b"Again: ", seen or b"")
    check("Ctrl-Z: after SIGCONT the next prompt comes", seen is not None)
    check("Ctrl-Z: echo off again at it", not echo_on(master))
    os.write(master, INTR)
    check("Ctrl-Z: then Ctrl-C still ends it with 130", wait_bounded(pid) == 130)
    drain(master)
    os.close(master)


# --- duress add ---------------------------------------------------------------------
USER = pwd.getpwuid(os.getuid()).pw_name
PW = b"Add-prompt-pw-5"


def add_world(tmp, name):
    """A fake example "demo" with its config, and a PAM stack whose user_dir=
    is under tmp/name; returns the arguments of `duress add demo` there and
    the per-user directory it installs into."""
    base = os.path.join(tmp, name)
    os.makedirs(base + "/ex")
    os.makedirs(base + "/pam")
    with open(base + "/ex/demo", "w") as f:
        f.write("#!/bin/sh\n# Summary: a demo\nCONFIG=/etc/duress.d/demo.conf\ntrue\n")
    os.chmod(base + "/ex/demo", 0o755)
    with open(base + "/ex/demo.conf", "w") as f:
        f.write("# the topic URL\nNTFY_URL=\nKEEP=1\n")
    with open(base + "/pam/common-auth", "w") as f:
        f.write("auth sufficient pam_duress.so user_dir=%s/%%u\n" % base)
    with open(base + "/pam/login", "w") as f:
        f.write("@include common-auth\n")
    args = ["add", "demo", "--pam-dir", base + "/pam", "--examples-dir", base + "/ex",
            "--memlimit", "8K", "--opslimit", "1", "--allow-weak-cost"]
    return args, os.path.join(base, USER)


def answer_passwords(master, seen, what):
    """Types PW at the two prompts, each only once it is shown with echo off."""
    mark = len(seen)
    for prompt in (b"Duress password: ", b"Again: "):
        seen = read_until(master, prompt, seen, mark=mark)
        check("%s: the prompt %r appears" % (what, prompt.decode()), seen is not None)
        if seen is None:
            return b""
        check("%s: echo is off at %r" % (what, prompt.decode()), not echo_on(master))
        mark = len(seen)
        os.write(master, PW + b"\r")
    return seen


def readme_keystrokes(tmp):
    args, target = add_world(tmp, "readme")
    url = b"https://ntfy.sh/Topic-kq7w2x"
    what = "README keystrokes"
    pid, master = spawn(*args, "--set-file", "NTFY_URL=-")
    os.write(master, url + b"\r")  # pasted, then Enter
    seen = read_match(master, rb"Duress password: |Ctrl-D", b"") or b""
    check("%s: before any prompt, one line says the value ends with Ctrl-D" % what,
          b"Ctrl-D" in seen and b"Duress password: " not in seen)
    os.write(master, EOF)  # then Ctrl-D
    seen = answer_passwords(master, seen, what + ", after Ctrl-D")
    seen = read_rest(master, seen)
    status = wait_bounded(pid)
    check("%s: exit 0 (got %s)" % (what, status), status == 0)
    check("%s: the check line says ARMED" % what,
          ("%s/demo: ARMED" % target).encode() in seen)
    check("%s: neither password is ever shown" % what, PW not in seen)
    try:
        with open(target + "/demo.conf", "rb") as f:
            conf = f.read()
    except OSError:
        conf = b""
    check("%s: the value is the one pasted" % what, b"\nNTFY_URL=" + url + b"\n" in conf)
    os.close(master)


def stand_in_editor(tmp, name, body):
    """An EDITOR that says it started, writes its pid to NAME.pid, then body."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho $$ >%s.pid\necho EDITOR-STARTED\n%s\n" % (path, body))
    os.chmod(path, 0o755)
    return path


def listing(directory):
    """Each entry of directory with its mode and content; None if it does not exist."""
    if not os.path.isdir(directory):
        return None
    out = {}
    for e in sorted(os.listdir(directory)):
        p = os.path.join(directory, e)
        with open(p, "rb") as f:
            out[e] = (os.lstat(p).st_mode, f.read())
    return out


def editor_gone(editor):
    """Whether the editor whose pid the stand-in wrote has ended (reaped)."""
    try:
        with open(editor + ".pid") as f:
            pid = int(f.read())
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    os.kill(pid, signal.SIGKILL)  # left running: end it, the test has failed
    return False


def editor_ended(tmp, what, body, stop, want, force=False):
    """duress add with a stand-in editor, stopped by stop(pid, master) once it
    runs: exit want, and the per-user directory as it was before."""
    args, target = add_world(tmp, "ed-" + what.replace(" ", "-"))
    if force:
        subprocess.run([*WRAP, DURESS, *args, "--no-edit", "--stdin"], input=PW + b"\n",
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    before = listing(target)
    editor = stand_in_editor(tmp, "editor-" + what.replace(" ", "-"), body)
    pid, master = spawn(*args, *(["--force"] if force else []),
                        env={"EDITOR": editor, "VISUAL": None})
    seen = answer_passwords(master, b"", what)
    seen = read_until(master, b"EDITOR-STARTED", seen, mark=0)
    check("%s: the editor starts" % what, seen is not None)
    said = (seen or b"").split(b"EDITOR-STARTED")[0]
    check("%s: one line before it names the file, the editor and --no-edit" % what,
          ("opening %s/demo.conf in %s ($EDITOR)" % (target, editor)).encode() in said
          and b"--no-edit" in said)
    stop(pid, master)
    status = wait_bounded(pid)
    check("%s: exit %d (got %s)" % (what, want, status), status == want)
    check("%s: the editor has ended too" % what, editor_gone(editor))
    check("%s: %s" % (what, "what was there is exactly as it was" if force else
                      "nothing is left behind"), listing(target) == before)
    if stop is not hang_up:
        drain(master)
        os.close(master)
    return args, target


def hang_up(pid, master):
    """The terminal closes: the kernel sends SIGHUP to add, its session leader."""
    os.close(master)


def editor_signals(tmp):
    editor_ended(tmp, "terminal closed at the editor", "exec sleep 60", hang_up, 129)
    # A hang-up that reaches add, from the editor's side.
    args, target = editor_ended(tmp, "editor sends SIGHUP to add", "kill -HUP $PPID\nexec sleep 60",
                                lambda pid, master: None, 129)
    # The rerun needs no --force.
    editor = stand_in_editor(tmp, "good-editor", "echo EDITED=1 >>\"$1\"")
    pid, master = spawn(*args, env={"EDITOR": editor, "VISUAL": None})
    seen = read_rest(master, answer_passwords(master, b"", "rerun"))
    status = wait_bounded(pid)
    check("rerun without --force after a hang-up: exit 0 (got %s)" % status, status == 0)
    check("rerun without --force: ARMED", ("%s/demo: ARMED" % target).encode() in seen)
    os.close(master)
    editor_ended(tmp, "SIGTERM to add at the editor", "exec sleep 60",
                 lambda pid, master: os.kill(pid, signal.SIGTERM), 143)
    editor_ended(tmp, "SIGTERM to add at the editor with --force", "exec sleep 60",
                 lambda pid, master: os.kill(pid, signal.SIGTERM), 143, force=True)
    editor_ended(tmp, "the editor killed", "kill -KILL $$", lambda pid, master: None, 1)
    editor_ended(tmp, "Ctrl-C at the editor", "exec sleep 60",
                 lambda pid, master: os.write(master, INTR), 1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        echo_off_before_prompt(tmp)
        interrupted(tmp, "Ctrl-C", False, ctrl_c)
        interrupted(tmp, "Ctrl-C", True, ctrl_c)
        interrupted(tmp, "SIGTERM", False, sigterm)
        interrupted(tmp, "SIGHUP", True, sighup)
        suspend_held(tmp)
        readme_keystrokes(tmp)
        editor_signals(tmp)
    print("1..%d" % n)
    return 1 if failed else 0


sys.exit(main())
