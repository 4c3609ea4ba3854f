#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Whether a Meson build directory is configured with the given options.

    tools/options-match.py BUILDDIR NAME=VALUE...

Exit 0 when BUILDDIR is configured and each NAME has VALUE (compared
without regard to case; a list option as its items joined by spaces),
1 otherwise.  The Makefile and tools/run-checks.sh use it to reconfigure
only when an option they own changed.
"""

import json
import os
import sys


def norm(value):
    if isinstance(value, list):
        value = " ".join(map(str, value))
    return str(value).lower()


def main(argv):
    info = os.path.join(argv[1], "meson-info", "intro-buildoptions.json")
    try:
        with open(info, encoding="utf-8") as f:
            have = {o["name"]: norm(o["value"]) for o in json.load(f)}
    except OSError:
        return 1
    want = dict(a.split("=", 1) for a in argv[2:])
    return int(any(have.get(k) != v.lower() for k, v in want.items()))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
