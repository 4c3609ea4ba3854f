#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Remove what `meson install` of this build directory installs.

Run by the build's `uninstall-files` target (`make uninstall`), with
MESON_BUILD_ROOT set by Meson and DESTDIR from the environment:

    tools/uninstall.py OWN_DIR...

Stateless, unlike `ninja uninstall` (which replays the log of the last
`meson install`): it removes DESTDIR + each destination that the configured
build directory lists in meson-info/intro-installed.json, then each OWN_DIR
(a directory only this project installs into) and the directories below it,
if they are empty.  A missing file is not an error; a file that cannot be
removed is.
"""

import json
import os
import sys


def staged(destdir, path):
    """PATH under DESTDIR, as `meson install` puts it there."""
    if not destdir:
        return path
    return os.path.join(destdir, os.path.relpath(path, os.sep))


def remove_files(destdir, destinations):
    for dest in sorted(destinations):
        path = staged(destdir, dest)
        if not os.path.lexists(path):
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            sys.exit(f"uninstall: {path} is a directory, not the file that was installed")
        os.unlink(path)
        print(f"removed {path}")


def remove_empty_dirs(top):
    """TOP and the directories below it, deepest first, when empty."""
    if not os.path.isdir(top) or os.path.islink(top):
        return
    for dirpath, _, _ in sorted(os.walk(top), key=lambda w: w[0], reverse=True):
        if not os.listdir(dirpath):
            os.rmdir(dirpath)
            print(f"removed directory {dirpath}")


def main():
    build = os.environ.get("MESON_BUILD_ROOT")
    if not build:
        sys.exit("uninstall: MESON_BUILD_ROOT is not set: run `make uninstall`")
    destdir = os.environ.get("DESTDIR", "")
    with open(os.path.join(build, "meson-info", "intro-installed.json"), encoding="utf-8") as f:
        destinations = json.load(f).values()
    try:
        remove_files(destdir, destinations)
        for own in sys.argv[1:]:
            remove_empty_dirs(staged(destdir, own))
    except OSError as e:
        sys.exit(f"uninstall: {e.filename}: {e.strerror}")


if __name__ == "__main__":
    main()
