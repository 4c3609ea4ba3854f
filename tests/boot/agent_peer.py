#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Both ends of systemd's password agent protocol, for test_unlock_relay.sh.

  agent_peer.py ask RELAY AGENT SUFFIX ID [MARK]
      an asker, as systemd-cryptsetup is under the drop-in's bind: its
      socket RELAY/sck.SUFFIX, its question RELAY/ask.SUFFIX (written to a
      temporary file, then renamed, as systemd does) naming the socket as
      AGENT/sck.SUFFIX (its own view, RELAY bound over AGENT), Id=ID.
      Waits (10 s at most) for one answer, prints it as hex on stdout and
      "mark=yes" or "mark=no" (whether the file MARK existed when it came),
      removes the question.  Exit 1 when no answer came.
  agent_peer.py answer AGENT SUFFIX HEX [COPY]
      an agent: waits (5 s at most) for AGENT/ask.SUFFIX, saves it to COPY,
      sends the bytes HEX to its Socket=.  Exit 1 when there was none, 3
      when the socket could not be reached.
  agent_peer.py answer-as UID AGENT SUFFIX HEX
      the same, but the socket is connected as root, then the process
      becomes UID (uid, gid, no groups) before it sends: as a descriptor
      root opened and a user was handed.  The kernel stamps the sender's
      uid at the send.  Exit 1 when there was no question, 3 when the
      socket could not be reached, 4 when the ids could not be changed.
  agent_peer.py gone AGENT SUFFIX
      exit 0 once AGENT/ask.SUFFIX is gone (5 s at most), else 1.
  agent_peer.py notify SOCKET DIR
      systemd's notify socket at SOCKET: prints the first message (5 s at
      most; exit 1 without one) and whether DIR existed when it came.
"""
import os
import socket
import sys
import time


def ask(relay, agent, suffix, ident, mark=None):
    sck = os.path.join(relay, "sck." + suffix)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    s.bind(sck)
    tmp = os.path.join(relay, "tmp." + suffix)
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"[Ask]\nPID={os.getpid()}\nSocket={agent}/sck.{suffix}\nAcceptCached=1\n"
                f"Echo=0\nNotAfter=0\nMessage=Please enter passphrase for disk cryptroot:\n"
                f"Icon=drive-harddisk\nId={ident}\n")
    os.rename(tmp, os.path.join(relay, "ask." + suffix))
    s.settimeout(10)
    try:
        data, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(12))
    except socket.timeout:
        return 1
    finally:
        os.unlink(os.path.join(relay, "ask." + suffix))
        os.unlink(sck)
    uid = None
    for level, kind, body in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            uid = int.from_bytes(body[4:8], sys.byteorder)
    print(data.hex())
    print("mark=" + ("yes" if mark and os.path.exists(mark) else "no"))
    print(f"uid={uid}")
    return 0


def question(agent, suffix):
    """The text of AGENT/ask.SUFFIX once it is there (5 s at most), or None."""
    path = os.path.join(agent, "ask." + suffix)
    end = time.monotonic() + 5
    while not os.path.exists(path):
        if time.monotonic() > end:
            return None
        time.sleep(0.05)
    with open(path, encoding="utf-8") as f:
        return f.read()


def socket_of(text):
    return [ln[len("Socket="):] for ln in text.splitlines() if ln.startswith("Socket=")][0]


def answer(agent, suffix, payload, copy=None):
    text = question(agent, suffix)
    if text is None:
        return 1
    if copy:
        with open(copy, "w", encoding="utf-8") as f:
            f.write(text)
    target = socket_of(text)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.sendto(payload, target)
    except OSError as e:
        print(f"cannot send to {target}: {e}", file=sys.stderr)
        return 3
    return 0


def answer_as(uid, agent, suffix, payload):
    text = question(agent, suffix)
    if text is None:
        return 1
    target = socket_of(text)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.connect(target)
    except OSError as e:
        print(f"cannot connect to {target}: {e}", file=sys.stderr)
        return 3
    try:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError as e:
        print(f"cannot become uid {uid}: {e}", file=sys.stderr)
        return 4
    if os.getuid() != uid or os.geteuid() != uid:
        return 4
    try:
        s.send(payload)
    except OSError as e:
        print(f"cannot send to {target} as uid {uid}: {e}", file=sys.stderr)
        return 3
    return 0


def gone(agent, suffix):
    end = time.monotonic() + 5
    while os.path.exists(os.path.join(agent, "ask." + suffix)):
        if time.monotonic() > end:
            return 1
        time.sleep(0.05)
    return 0


def notify(path, d):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(5)
    try:
        data = s.recv(4096)
    except socket.timeout:
        return 1
    print(data.decode(errors="replace"))
    print("dir=" + ("yes" if os.path.isdir(d) else "no"))
    return 0


def main(argv):
    if argv[:1] == ["ask"] and len(argv) in (5, 6):
        return ask(*argv[1:])
    if argv[:1] == ["answer"] and len(argv) in (4, 5):
        return answer(argv[1], argv[2], bytes.fromhex(argv[3]), *argv[4:])
    if argv[:1] == ["answer-as"] and len(argv) == 5:
        return answer_as(int(argv[1]), argv[2], argv[3], bytes.fromhex(argv[4]))
    if argv[:1] == ["gone"] and len(argv) == 3:
        return gone(*argv[1:])
    if argv[:1] == ["notify"] and len(argv) == 3:
        return notify(*argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
