#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Refuse a `make install` that would overwrite files a Debian package owns.

Run by the Makefile's install target before `meson install`:

    tools/install-guard.py BUILDDIR

With DESTDIR set (a staged install, as packagers make) it checks nothing.
Otherwise it asks dpkg which of the files that BUILDDIR installs (its
meson-info/intro-installed.json) already exist and belong to a package --
the PAM module above all, which goes to the distribution's PAM module
directory whatever PREFIX is, so libpam-duress's own module would be
replaced.  Each is printed, then what to do; exit 1.  A file the admin
diverted (dpkg-divert --local --rename --add PATH, the Debian way to replace
a packaged file on purpose) is not a collision: the package's copy is
elsewhere.  No dpkg (not Debian): exit 0.
"""

import json
import os
import shutil
import subprocess
import sys


def aliases(path):
    """PATH and its other name under a merged /usr (dpkg knows only one)."""
    for top in ("/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/"):
        if path.startswith(top):
            return [path, "/usr" + path]
        if path.startswith("/usr" + top):
            return [path, path[len("/usr"):]]
    return [path]


def owners(paths):
    """{path: package} for the PATHS a package owns (dpkg-query -S)."""
    if not paths or not shutil.which("dpkg-query"):
        return {}
    res = subprocess.run(["dpkg-query", "-S", *paths], capture_output=True, text=True,
                         check=False, env=dict(os.environ, LC_ALL="C"))
    found = {}
    for line in res.stdout.splitlines():
        if line.startswith("diversion by") or ": " not in line:
            continue
        pkgs, path = line.split(": ", 1)
        if path in paths:
            found[path] = pkgs.split(",")[0].split(":")[0].strip()
    return found


def diverted(path):
    if not shutil.which("dpkg-divert"):
        return False
    res = subprocess.run(["dpkg-divert", "--truename", path], capture_output=True,
                         text=True, check=False)
    return res.returncode == 0 and res.stdout.strip() != path


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tools/install-guard.py BUILDDIR")
    if os.environ.get("DESTDIR"):
        return 0
    info = os.path.join(sys.argv[1], "meson-info", "intro-installed.json")
    with open(info, encoding="utf-8") as f:
        destinations = sorted(set(json.load(f).values()))
    existing = [d for d in destinations if os.path.lexists(d)]
    query = sorted({a for d in existing for a in aliases(d)})
    owned = owners(query)
    clash = []
    for d in existing:
        for a in aliases(d):
            if a in owned and not diverted(a):
                clash.append((d, owned[a]))
                break
    if not clash:
        return 0
    for path, pkg in clash:
        print(f"make install: {path} belongs to the package {pkg}: not overwriting it",
              file=sys.stderr)
    pkgs = " ".join(sorted({p for _, p in clash}))
    print(f"make install: remove the package first (sudo apt-get remove {pkgs}), or stage the "
          "install elsewhere (make install DESTDIR=DIR); docs/debian.md says more",
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
