#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The documentation holds together.

- README.md is a front door: at most README_MAX lines, and it links every
  page of docs/ and both man pages, so each is one click away;
- every relative link in README.md and docs/*.md names a file that exists
  and, with a #fragment into a Markdown file, a heading of that file
  (GitHub's slugs: lower case, punctuation dropped, spaces to hyphens,
  -1, -2 for repeats);
- meson.build installs every page of docs/;
- each option of `duress SUB --help`'s usage lines is in man/duress.1's
  SYNOPSIS for SUB and in the synopsis block of docs/actions.md, and
  duress_sign's SYNOPSIS lists the same options as sign's.

Usage: test_docs.py DURESS SOURCE_ROOT
"""
import os
import re
import subprocess
import sys

DURESS, ROOT = sys.argv[1], sys.argv[2]
README_MAX = 200
SUBS = ["sign", "verify", "check", "test", "add"]

n = 0
failed = 0


def check(desc, cond, why=""):
    global n, failed
    n += 1
    if cond:
        print(f"ok {n} - {desc}")
    else:
        failed += 1
        print(f"not ok {n} - {desc}")
        if why:
            for line in str(why).splitlines():
                print(f"# {line}")



def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def prose_lines(text):
    """The lines outside fenced code blocks, with their line numbers."""
    fence = None
    for no, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield no, line


def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # link text only
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    seen = {}
    out = set()
    for _, line in prose_lines(text):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.add(base if k == 0 else f"{base}-{k}")
    return out


def links(text):
    """(line number, target) of every inline link outside code."""
    for no, line in prose_lines(text):
        line = re.sub(r"`[^`]*`", "", line)  # code spans
        for m in re.finditer(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", line):
            yield no, m.group(1)


docs = sorted(f"docs/{f}" for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
pages = ["README.md"] + docs

# --- README.md is a front door ------------------------------------------------------
readme = read("README.md")
count = readme.count("\n")
check(f"README.md: {count} lines, at most {README_MAX}", count <= README_MAX)
readme_targets = {os.path.normpath(t.split("#")[0]) for _, t in links(readme)}
for page in docs + ["man/duress.1", "man/pam_duress.8", "SECURITY.md"]:
    check(f"README.md links {page}", page in readme_targets)

# --- every relative link resolves ---------------------------------------------------
heads = {}
for page in pages:
    bad = []
    for no, target in links(read(page)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, frag = target.partition("#")
        rel = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(os.path.join(ROOT, rel)):
            bad.append(f"{page}:{no}: {target}: no such file {rel}")
            continue
        if frag and rel.endswith(".md"):
            if rel not in heads:
                heads[rel] = anchors(read(rel))
            if frag not in heads[rel]:
                bad.append(f"{page}:{no}: {target}: no heading #{frag} in {rel}")
    check(f"{page}: every relative link resolves", not bad, "\n".join(bad))

# --- meson.build installs every page ------------------------------------------------
meson = read("meson.build")
for page in docs:
    check(f"meson.build installs {page}", f"'{page}'" in meson)


# --- synopses: --help, the man page, docs/actions.md --------------------------------
def opts(text):
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))


def help_synopsis(sub):
    r = subprocess.run([DURESS, sub, "--help"], capture_output=True, text=True, timeout=10)
    usage = r.stdout.split("\n\n", 1)[0]
    return r.returncode, usage


def read_checked(rel):
    exists = os.path.exists(os.path.join(ROOT, rel))
    check(f"{rel} exists", exists)
    return read(rel) if exists else ""


man = read_checked("man/duress.1")
m = re.search(r"^\.Sh SYNOPSIS\n(.*?)^\.Sh ", man, re.M | re.S)
man_syn = {}
for block in re.split(r"^(?=\.Nm )", m.group(1) if m else "", flags=re.M):
    name = re.match(r"\.Nm (\S+)", block)
    cm = re.search(r"^\.Cm (\S+)", block, re.M)
    if not name:
        continue
    key = cm.group(1) if name.group(1) == "duress" and cm else name.group(1)
    found = {"--" + o for o in re.findall(r"\bFl -([a-z][a-z-]*)", block)}
    man_syn.setdefault(key, set()).update(found)

actions = read_checked("docs/actions.md")
m = re.search(r"^## The `duress` command\n+```\n(.*?)^```", actions, re.M | re.S)
doc_syn = {}
sub = None
for line in (m.group(1) if m else "").split("\n"):
    w = re.match(r"^(duress(?:_sign)?)(?:\s+(\w+))?", line)
    if w:
        sub = w.group(2) if w.group(1) == "duress" else "duress_sign"
    if sub:
        doc_syn.setdefault(sub, set()).update(opts(line.split("#")[0]))
check("docs/actions.md: the synopsis block of the duress command", set(SUBS) <= set(doc_syn), sorted(doc_syn))

for sub in SUBS:
    rc, usage = help_synopsis(sub)
    want = opts(usage)
    check(f"duress {sub} --help: usage lines with options", rc == 0 and (want or sub == "verify"), usage)
    missing = sorted(want - man_syn.get(sub, set()))
    check(f"man/duress.1 SYNOPSIS of {sub} lists {' '.join(sorted(want))}", not missing,
          "missing: " + " ".join(missing))
    missing = sorted(want - doc_syn.get(sub, set()))
    check(f"docs/actions.md synopsis of {sub} lists them too", not missing, "missing: " + " ".join(missing))
check("man/duress.1 SYNOPSIS: duress_sign has the options of duress sign",
      man_syn.get("duress_sign") == man_syn.get("sign"),
      f"sign: {sorted(man_syn.get('sign', ()))}\nduress_sign: {sorted(man_syn.get('duress_sign', ()))}")
check("man/duress.1 SYNOPSIS: sign has --pam-dir", "--pam-dir" in man_syn.get("sign", set()))

print(f"1..{n}")
sys.exit(1 if failed else 0)
