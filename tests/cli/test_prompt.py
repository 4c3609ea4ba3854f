#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The terminal prompt of `duress sign`, driven through a real pseudo-terminal.

- echo is off before the prompt is written: output is held with XOFF, so the
  prompt cannot appear; the echo must go off while it is held (the old order,
  prompt first, would wait for XON and never turn echo off);
- Ctrl-C (SIGINT through the terminal) and SIGTERM at either prompt end the
  command at once with 128 + the signal, echo back on, no .sig written.

Usage: test_prompt.py DURESS   ($DURESS_VALGRIND, if set, prefixes the command)
"""
import os
import pty
import select
import shlex
import signal
import sys
import tempfile
import termios
import time

DURESS = sys.argv[1]
WRAP = shlex.split(os.environ.get("DURESS_VALGRIND", ""))
# Generous for valgrind; a prompt that ignores the signal waits forever.
BOUND = 20.0 if WRAP else 5.0
XOFF, XON, INTR = b"\x13", b"\x11", b"\x03"

n = 0
failed = 0


def check(desc, cond):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, desc), flush=True)


def spawn(*args):
    pid, master = pty.fork()
    if pid == 0:
        argv = WRAP + [DURESS] + list(args)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    return pid, master


def read_until(master, text, seen, bound=BOUND):
    """Reads the terminal until text shows up; returns what was read, or None."""
    end = time.monotonic() + bound
    while text not in seen:
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
    pid, master = spawn("sign", action)
    os.write(master, XOFF)
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


def main():
    with tempfile.TemporaryDirectory() as tmp:
        echo_off_before_prompt(tmp)
        interrupted(tmp, "Ctrl-C", False, ctrl_c)
        interrupted(tmp, "Ctrl-C", True, ctrl_c)
        interrupted(tmp, "SIGTERM", False, sigterm)
        interrupted(tmp, "SIGHUP", True, sighup)
    print("1..%d" % n)
    return 1 if failed else 0


sys.exit(main())
