# SPDX-License-Identifier: GPL-2.0-or-later
"""TAP output for the boot suite's Python tests (meson's protocol : 'tap')."""
import sys

count = 0
failed = 0


def ok(cond, desc, diag=None):
    """One test line; DIAG (any text) as comments when COND is false."""
    global count, failed
    count += 1
    print(("ok" if cond else "not ok") + f" {count} - {desc}")
    if not cond:
        failed += 1
        for line in str(diag or "").splitlines():
            print("# " + line)
    sys.stdout.flush()
    return cond


def skip(desc, why):
    """A test that cannot run here, counted as passed."""
    global count
    count += 1
    print(f"ok {count} - {desc} # SKIP {why}")
    sys.stdout.flush()


def comment(text):
    print("# " + text)
    sys.stdout.flush()


def skip_all(why):
    print(f"1..0 # SKIP {why}")
    print(f"SKIP: {why}", file=sys.stderr)
    sys.exit(0)


def done():
    """The plan; the exit status."""
    print(f"1..{count}")
    return 1 if failed else 0


def bail(desc, diag):
    """A setup step failed: the rest cannot run."""
    ok(False, "setup: " + desc, diag)
    sys.exit(done() or 1)


def diag_boot(r, lines=30):
    """What a bootvm.BootResult says, for a failed test's comments."""
    return (f"unlocked={r.unlocked} finished={r.finished} prompts={r.prompts} typed={r.typed} "
            f"timed_out={r.timed_out} rc={r.returncode} {r.seconds} s\n"
            f"--- console tail:\n{r.tail(lines)}")


def timed(boot, image, passphrases, what, **kw):
    """BOOT(image, passphrases, **kw) (bootvm.booter()), its times as a comment."""
    r = boot(image, passphrases, **kw)
    comment(f"boot, {what}: {r.seconds} s (prompts at {r.prompt_seconds}, typed at {r.typed_seconds}, "
            f"root's init at {r.unlocked_seconds})")
    return r
