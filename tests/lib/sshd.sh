# SPDX-License-Identifier: GPL-2.0-or-later
#
# A real OpenSSH sshd on 127.0.0.1 and logins to it with sshpass + ssh, for
# the root-only scripts that need one (tests/e2e/test_e2e.sh, bench/spray),
# sourced after tap.sh and root.sh:
#   . "$(dirname "$0")/../lib/sshd.sh"
#
# The caller sets SERVICE (the PAM service: sshd takes it from its program
# name, so it runs through a symlink $T/ssh/$SERVICE; /etc/pam.d/$SERVICE is
# the caller's), SSHD_BIN (sshd's absolute path), U1 (the account allowed to
# log in) and makes the directory $T/ssh (mode 0700), where the host key,
# the configuration and the pid file go.  The caller runs with a /run of its
# own (private_etc_or_rerun, tests/lib/root.sh; bench/spray's namespace):
# sshd's privilege separation directory, /run/sshd, is made there when the
# machine has none, and goes with it.  start_sshd sets SSHD_PID and
# SSH_PORT; stop_sshd ends that sshd.
# Optional settings, read by start_sshd: SSHD_ALLOW_USERS ($U1),
# SSHD_MAX_STARTUPS (100), SSHD_MAX_AUTH_TRIES (6), SSHD_LOGIN_GRACE (30);
# by ssh_as: SSH_TIMEOUT (30 s, the whole client).
# shellcheck shell=bash

SSHD_PID=""
SSH_PORT=""

# sshd_listening LOG PID PORT: waits (bound 10 s at most) until sshd PID says
# in LOG that it listens on PORT; fails at once if it died.
sshd_listening() {
	local i
	for ((i = 0; i < $(bound 10) * 10; i++)); do
		grep -q "Server listening on 127.0.0.1 port $3" "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# sshd's privilege separation directory, in the caller's own /run.
ensure_run_sshd() { [ -d /run/sshd ] || mkdir -m 755 /run/sshd; }
start_sshd() {
	local port
	ensure_run_sshd || return 1
	ssh-keygen -q -t ed25519 -N '' -C "$SERVICE" -f "$T/ssh/host_ed25519" >/dev/null || return 1
	# OpenSSH uses its program name as PAM service; it re-executes itself, so
	# it must be started by an absolute path.
	# shellcheck disable=SC2153 # SSHD_BIN is the caller's
	ln -s "$SSHD_BIN" "$T/ssh/$SERVICE" || return 1
	for _ in 1 2 3; do
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null) ||
			port=$((20000 + RANDOM % 40000))
		cat >"$T/ssh/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $T/ssh/host_ed25519
PidFile $T/ssh/sshd.pid
UsePAM yes
PasswordAuthentication yes
KbdInteractiveAuthentication yes
PubkeyAuthentication no
HostbasedAuthentication no
AuthorizedKeysFile none
PermitRootLogin no
AllowUsers ${SSHD_ALLOW_USERS:-$U1}
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
PermitTunnel no
MaxAuthTries ${SSHD_MAX_AUTH_TRIES:-6}
MaxStartups ${SSHD_MAX_STARTUPS:-100}
LoginGraceTime ${SSHD_LOGIN_GRACE:-30}
LogLevel VERBOSE
EOF
		"$T/ssh/$SERVICE" -t -f "$T/ssh/sshd_config" >"$T/sshd.log" 2>&1 || return 1
		# A clean environment: nothing of the caller's (meson's LD_LIBRARY_PATH...) leaks in.
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$T/ssh/$SERVICE" -D -e -f "$T/ssh/sshd_config" \
			>"$T/sshd.log" 2>&1 </dev/null &
		SSHD_PID=$!
		if sshd_listening "$T/sshd.log" "$SSHD_PID" "$port"; then
			SSH_PORT=$port
			return 0
		fi
		kill -TERM "$SSHD_PID" 2>/dev/null
		wait "$SSHD_PID" 2>/dev/null
		SSHD_PID=""
	done
	return 1
}
# stop_sshd: ends the sshd of start_sshd (TERM, KILL after 5 s), if any.
# The processes of connections still open are the caller's to end.
stop_sshd() {
	[ -n "$SSHD_PID" ] || return 0
	kill -TERM "$SSHD_PID" 2>/dev/null
	wait_for 5 fails kill -0 "$SSHD_PID" 2>/dev/null
	kill -KILL "$SSHD_PID" 2>/dev/null
	wait "$SSHD_PID" 2>/dev/null
	SSHD_PID=""
}

# ssh_as USER PASSWORD METHOD COMMAND: one login (one password) as USER to
# the sshd on $SSH_PORT, COMMAND run there; ssh's output on standard output
# and error, its status (255 for a refused login, 124 past bound SSH_TIMEOUT).
ssh_as() {
	SSHPASS=$2 timeout "$(bound "${SSH_TIMEOUT:-30}")" sshpass -e ssh -F /dev/null -T \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
		-o ConnectTimeout=10 -o PreferredAuthentications="$3" -o PubkeyAuthentication=no \
		-o GSSAPIAuthentication=no -o NumberOfPasswordPrompts=1 -o BatchMode=no \
		-p "$SSH_PORT" "$1@127.0.0.1" "$4" </dev/null
}
# ssh_login PASSWORD METHOD COMMAND: ssh_as U1; output in $T/ssh.out, errors in $T/ssh.err.
ssh_login() { ssh_as "$U1" "$@" >"$T/ssh.out" 2>"$T/ssh.err"; }
