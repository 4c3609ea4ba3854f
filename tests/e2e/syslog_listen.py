#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A /dev/log stand-in for the end-to-end tests' log-parity section.

    syslog_listen.py SOCKET OUTPUT SECONDS MAX_BYTES

Binds a unix datagram socket at SOCKET (mode 0666: pam_unix in sshd writes as
root, the action runner as the user) and appends each datagram it receives to
OUTPUT, one line per message, as syslog(3) sent it ("<PRI>Mmm dd hh:mm:ss
ident[pid]: text").  It exits by itself after SECONDS or once MAX_BYTES have
been written (later messages are dropped), and at once on SIGTERM; it removes
SOCKET when it ends.

test_e2e.sh makes SOCKET the /dev/log of a private mount namespace only, so
the host's logging is never touched:

* /dev/log exists on the host (a socket of journald or rsyslog, or a symlink
  to one): the socket is bind-mounted over it inside the namespace.
* /dev/log does not exist (a container without a syslog daemon), or is a
  symlink into /run (journald's), which test_e2e.sh's private root hides
  behind a tmpfs of its own (tests/lib/root.sh): nothing may
  be created in the host's /dev, and a bind mount needs an existing target.
  Inside the namespace the real /dev is first bind-mounted (recursively, with
  pts and shm) on a directory of the test's own, then a tmpfs is mounted over
  /dev and every entry of the real one is bind-mounted back onto an empty
  file or directory of the same name (symlinks are copied), and SOCKET is
  bind-mounted at /dev/log.  Device nodes stay the real ones (bind mounts, not
  copies made with mknod), so sshd sees the same /dev/null, /dev/urandom and
  /dev/pts.  One exception: /dev/ptmx becomes a symlink to pts/ptmx, because
  the kernel finds a ptmx node's devpts instance through the "pts" entry next
  to it, which a bind-mounted node does not have (opening it fails with
  ENOENT and sshd cannot allocate a terminal).  The tmpfs and every mount
  vanish with the namespace.
"""

import os
import select
import signal
import socket
import sys
import time


def main():
    if len(sys.argv) != 5:
        sys.stderr.write("usage: syslog_listen.py SOCKET OUTPUT SECONDS MAX_BYTES\n")
        return 2
    path, output = sys.argv[1], sys.argv[2]
    deadline = time.monotonic() + float(sys.argv[3])
    room = int(sys.argv[4])

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(path)
        os.chmod(path, 0o666)
        with open(output, "ab", buffering=0) as out:
            while room > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                ready, _, _ = select.select([sock], [], [], left)
                if not ready:
                    continue
                msg = sock.recv(65536).rstrip(b"\0\n")
                line = msg.replace(b"\n", b" ")[:room - 1] + b"\n"
                out.write(line)
                room -= len(line)
    finally:
        sock.close()
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
