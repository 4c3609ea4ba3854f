#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The five examples through real duress logins (root only): pamtester against
# the real pam_unix and the built module, a real account, each example
# installed as a user would install it, the module's own runner starting it
# (detached, clean environment, as the right user, from a sealed memfd).
#
#   test_examples_e2e.sh MODULE DURESS_CLI EXAMPLES_DIR
#
# Isolation.  The test runs in a private root (private_etc_or_rerun,
# tests/lib/root.sh): mount and PID namespaces of its own, /run a tmpfs
# there ($T in it), /etc an overlay whose upper layer is in it.  The
# account (useradd), the PAM service /etc/pam.d/duress-ex-R, /etc/duress.d,
# the network namespace (named in that /run) and every process it starts
# never reach the machine and go with the test however it ends, SIGKILL
# included; the passwords are random.  The logins run in a part of their
# own (this script again with --inside, in a mount namespace inside that
# root) where /etc/pam.d is a tmpfs copy of the machine's without the files
# that name pam_duress: self-uninstall refuses a stack with a file it has no
# saved copy of.
# pamtester runs under "ip netns exec NS", a network namespace of the
# test's: the runner and the actions inherit it (the runner changes no
# namespace), so net-down brings down NS's links and alert reaches a
# recorder on NS's 127.0.0.1 only.  cryptsetup is, in the mount namespace,
# a pass-through that records its calls (to see that luks-wipe ran and what
# it ran).  Afterwards: the machine's /etc/pam.d, /etc/passwd, /etc/group,
# /etc/shadow (read where the private root shows them, $MACHINE_ETC) and
# network links are as before.
#
# First each example is rehearsed (duress test --rehearse with its duress
# password): it prints what it would do, exit 0, and nothing changes but
# alert's messages, each marked as a test.
#
# One duress password per example, so each login fires exactly one, and the
# state of all five effects is compared after every login (a login must not
# fire the others):
#   real password   nothing runs
#   alert (user)    ntfy and webhook requests on the recorder, an e-mail
#                   through a sendmail stand-in that records its uid
#   hide (user)     a scratch directory moved under HIDE_DIR
#   net-down        a veth pair and a dummy (ifb) link down, lo up
#   luks-wipe       dry run (the default) on a LUKS2 image on a loop device:
#                   cryptsetup isLuks ran, nothing else; header unchanged
#                   (no device-mapper here: nothing is opened, nor needs to be)
#   self-uninstall  last: the service file byte for byte the saved copy,
#                   /etc/duress.d and ~/.duress gone; then the duress password
#                   is refused and the real one still works
#
# Not root, a sanitizer-built module (DURESS_PRELOAD_ASAN: pamtester cannot
# load it without the runtime) or a missing tool: "1..0 # SKIP reason".
# shellcheck disable=SC2317 # the predicates are called through check_diag and wait_for
set -u
export LC_ALL=C
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"


# ============================================================================
# Inside the private mount namespace: a part (tap_part)
# ============================================================================
inside() {
	at_exit inside_cleanup
	U=exe_$R
	SERVICE=duress-ex-$R
	PAMFILE=/etc/pam.d/$SERVICE
	RP=$(random_password)
	declare -A DP=([alert]=$(random_password) [hide]=$(random_password)
		[net-down]=$(random_password) [luks-wipe]=$(random_password)
		[self-uninstall]=$(random_password))
	UID_=""
	RECORDER_PID=""

	isolate || setup_failed "isolation (the private root's /etc, a private /etc/pam.d)"
	make_account || setup_failed "the account $U"
	write_stack || setup_failed "the PAM service $PAMFILE"
	start_recorder || setup_failed "the HTTP recorder in $NS"
	stand_ins || setup_failed "the sendmail and cryptsetup stand-ins"
	install_examples
	[ "$failed" -eq 0 ] || setup_failed "installing the examples"
	duress check --user "$U" --service "$SERVICE" >"$T/check.out" 2>&1
	check_diag "duress check: the stack reaches the module and all five examples are ARMED" \
		"$T/check.out" test "$(grep -c ARMED "$T/check.out")" -eq 5
	run_logins
}

# A failed setup step (setup_failed) ends the part: the namespace's effects vanish with it.

# shellcheck disable=SC2317 # called by at_exit
inside_cleanup() {
	[ -z "$RECORDER_PID" ] || kill "$RECORDER_PID" 2>/dev/null
	# Actions still running as the test account (alert's worker retries):
	# waited for, bounded, then ended by PID.  The uid was free when chosen.
	[ -z "$UID_" ] || reap_uid 5 "$UID_"
}

# /etc the private root's overlay (the outer part's), /etc/pam.d in this
# namespace a copy without the files that name pam_duress; refuses to go on
# otherwise, since everything after this writes to /etc.
isolate() {
	in_private_root && mkdir "$WORK/pam.d" || return 1
	local f
	for f in /etc/pam.d/*; do
		grep -q pam_duress "$f" 2>/dev/null || cp -a "$f" "$WORK/pam.d/"
	done
	mount --bind "$WORK/pam.d" /etc/pam.d &&
		[ "$(findmnt -n -o FSTYPE -M /etc/pam.d | tail -n 1)" = tmpfs ] || return 1
	# Should the machine have one: hidden by an overlay whiteout, untouched.
	rm -rf /etc/duress.d
}

# A uid that is free (no account, no process), so that ending the
# account's processes at the end can only hit the test's own.
free_uid() {
	local u i
	for ((i = 0; i < 100; i++)); do
		u=$((42000 + $(od -An -N2 -tu2 /dev/urandom) % 18000))
		getent passwd "$u" >/dev/null || pgrep -u "$u" >/dev/null || { echo "$u"; return 0; }
	done
	return 1
}
make_account() {
	HOMEDIR=$WORK/home/$U
	UID_=$(free_uid) || return 1
	mkdir -p "$WORK/home" || return 1
	if ! useradd -m -d "$HOMEDIR" -u "$UID_" -s /bin/sh "$U" >"$T/useradd.log" 2>&1; then
		sed 's/^/# /' "$T/useradd.log"
		return 1
	fi
	printf '%s:%s\n' "$U" "$RP" | chpasswd && GID_=$(id -g "$U")
}

# The admin's stack before pam_duress (what self-uninstall restores), and
# the stack with it: the built module by absolute path, its own runner.
write_stack() {
	mkdir -m 700 "$WORK/saved" &&
		cat >"$WORK/saved/$SERVICE" <<EOF &&
# Examples end-to-end test: the stack as saved before the duress module was added.
auth     [success=1 default=ignore]  pam_unix.so nodelay
auth     requisite                   pam_deny.so
auth     required                    pam_permit.so
account  required                    pam_unix.so
EOF
		cat >"$PAMFILE" <<EOF
# pam_duress examples end-to-end test.
auth     [success=2 default=ignore]  pam_unix.so nodelay
auth     [success=1 default=ignore]  $MODULE global_dir=/etc/duress.d runner=$RUNNER
auth     requisite                   pam_deny.so
auth     required                    pam_permit.so
account  required                    pam_unix.so
EOF
}

start_recorder() {
	PORT=$(ip netns exec "$NS" python3 "$HERE/http_recorder.py" --free-port) || return 1
	REQ_LOG=$WORK/requests.jsonl
	: >"$REQ_LOG"
	ip netns exec "$NS" python3 "$HERE/http_recorder.py" --port "$PORT" --log "$REQ_LOG" \
		--lifetime 150 </dev/null >"$T/recorder.err" 2>&1 &
	RECORDER_PID=$!
	wait_for 5 ip netns exec "$NS" curl -s -o /dev/null "http://127.0.0.1:$PORT/ready"
	# That probe is not the alert's.
	[ -s "$REQ_LOG" ] && : >"$REQ_LOG"
}

# sendmail: records the uid it ran as and the mail (alert runs as the user).
# cryptsetup: a pass-through over the real one, in this namespace only,
# recording each call and its exit status.
stand_ins() {
	MAILDIR=$WORK/mail
	CS_LOG=$WORK/cryptsetup.log
	CS_REAL=$WORK/bin/cryptsetup.real
	mkdir -p "$WORK/bin" "$MAILDIR" && chmod 1777 "$MAILDIR" && : >"$CS_LOG" || return 1
	cat >"$WORK/bin/sendmail" <<EOF || return 1
#!/bin/sh
f=$MAILDIR/.mail.\$\$
{ echo "uid=\$(id -u)"; echo "args=\$*"; cat; } >"\$f" && mv "\$f" "$MAILDIR/mail.\$\$"
EOF
	chmod 755 "$WORK/bin/sendmail"
	[ -n "$LOOP" ] || return 0
	cp "$(command -v cryptsetup)" "$CS_REAL" &&
		cat >"$WORK/bin/cryptsetup" <<EOF &&
#!/bin/sh
echo "start \$*" >>"$CS_LOG"
"$CS_REAL" "\$@"
rc=\$?
echo "end \$rc \$*" >>"$CS_LOG"
exit \$rc
EOF
		chmod 755 "$WORK/bin/cryptsetup" &&
		mount --bind "$WORK/bin/cryptsetup" "$(command -v cryptsetup)"
}

# --- installing the examples as a user would --------------------------------
# conf_with NAME KEY=VALUE...: the shipped NAME.conf with each KEY's line set
# to KEY=VALUE (appended when the shipped file has no such line).
conf_with() {
	local text kv
	text=$(cat "$EXAMPLES/$1.conf")
	shift
	for kv; do
		if grep -q "^${kv%%=*}=" <<<"$text"; then
			# shellcheck disable=SC2001 # one line of a multi-line text replaced
			text=$(sed "s|^${kv%%=*}=.*|$kv|" <<<"$text")
		else
			text+=$'\n'$kv
		fi
	done
	printf '%s\n' "$text"
}
# installed NAME DIR: the example with its CONFIG line pointing at DIR/NAME.conf
# (and hide's HELPER_DIRS at the built fdtree's copy, as it is not installed).
installed() {
	sed -e "s|^CONFIG=.*|CONFIG=$2/$1.conf|" -e "s|^HELPER_DIRS=.*|HELPER_DIRS=$WORK/bin|" \
		"$EXAMPLES/$1"
}

# install_user NAME KEY=VALUE...: in ~/.duress, by the user, signed with --also.
install_user() {
	local name=$1 dir=$HOMEDIR/.duress
	shift
	# shellcheck disable=SC2016 # $1 and $2 belong to the inner shell
	installed "$name" "$dir" | as_user "$U" sh -c 'umask 077; mkdir -p "$1"; cat >"$1/$2"; chmod 700 "$1/$2"' \
		sh "$dir" "$name" &&
		conf_with "$name" "$@" | as_user "$U" sh -c 'umask 077; cat >"$1"' sh "$dir/$name.conf" &&
		echo "${DP[$name]}" | as_user "$U" "$DURESS" sign --stdin --also "$dir/$name.conf" "$dir/$name" \
			>"$T/sign.log" 2>&1
	check_diag "$name: installed in ~/.duress, signed by $U with its config bound" "$T/sign.log" \
		test "$(stat -c '%U %a' "$dir/$name" "$dir/$name.conf" "$dir/$name.sig" 2>&1 | tr '\n' ' ')" \
		= "$U 700 $U 600 $U 600 "
}
# install_global NAME KEY=VALUE...: in /etc/duress.d, by root.
install_global() {
	local name=$1 dir=/etc/duress.d
	shift
	(umask 077 && mkdir -p "$dir" && installed "$name" "$dir" >"$dir/$name" && chmod 700 "$dir/$name" &&
		conf_with "$name" "$@" >"$dir/$name.conf") &&
		echo "${DP[$name]}" | "$DURESS" sign --stdin --also "$dir/$name.conf" "$dir/$name" >"$T/sign.log" 2>&1
	check_diag "$name: installed in /etc/duress.d, signed by root with its config bound" "$T/sign.log" \
		test "$(stat -c '%U %a' "$dir/$name" "$dir/$name.conf" "$dir/$name.sig" 2>&1 | tr '\n' ' ')" \
		= "root 700 root 600 root 600 "
}

install_examples() {
	# A copy of the CLI the account can run, whatever the build tree's modes.
	install -m 755 "$DURESS_SRC" "$WORK/bin/duress"
	# ... and of hide's helper, built beside the module and the runner.
	install -m 755 "$(dirname "$MODULE")/fdtree" "$WORK/bin/fdtree"
	DURESS=$WORK/bin/duress
	local n_config
	n_config=$(grep -c '^CONFIG=' "$EXAMPLES"/{alert,hide,net-down,luks-wipe,self-uninstall} | grep -cv ':1$')
	check "each example has exactly one CONFIG= line to rewrite" test "$n_config" -eq 0

	# WIFI=no: nmcli or iw would show the machine's own networks.
	install_user alert TRANSPORTS=ntfy,webhook,mail \
		"NTFY_URL=http://127.0.0.1:$PORT/duress-$R" "NTFY_TOKEN=tok-$R" \
		"WEBHOOK_URL=http://127.0.0.1:$PORT/hook" "MAIL_TO=owner-$R@example.invalid" \
		"SENDMAIL=$WORK/bin/sendmail" "EXTERNAL_IP_URL=http://127.0.0.1:$PORT/ip" \
		WIFI=no TIMEOUT=5 RETRY_FOR=20 RETRY_INTERVAL=2
	# The shipped HIDE_DIR, and a ~/ path: expanded with the runner's HOME.
	mkdir -p "$HOMEDIR/scratch/sub" && echo "secret $R" >"$HOMEDIR/scratch/sub/notes" &&
		echo "kept $R" >"$HOMEDIR/keep" && chown -R "$UID_:$GID_" "$HOMEDIR/scratch" "$HOMEDIR/keep"
	install_user hide "MOVE=~/scratch"
	# USE_NMCLI=no: in a network namespace nmcli would still reach the
	# machine's NetworkManager over D-Bus (no nmcli here anyway).
	install_global net-down USE_NMCLI=no
	if [ -n "$LOOP" ]; then
		# The shipped ACTION=kill-slot SLOT=1 ARMED=no: a dry run.
		install_global luks-wipe "DEVICE=$LOOP"
	else
		skip "luks-wipe: no cryptsetup or no loop device"
	fi
	install_global self-uninstall "SAVED_PAM_DIR=$WORK/saved"
}

# --- logins and what they did ------------------------------------------------
# login PASSWORD: pamtester inside the network namespace; output in $T/pt.out.
login() {
	printf '%s\n' "$1" | timeout "$(bound 30)" ip netns exec "$NS" pamtester -I "rhost=rhost-$R" "$SERVICE" "$U" \
		authenticate >"$T/pt.out" 2>&1
}
logged_in() { grep -q "successfully authenticated" "$T/pt.out"; }
refused() { ! logged_in && grep -q "Authentication failure" "$T/pt.out"; }

# The effect of each example, one field each.
scratch_state() {
	if [ -e "$HOMEDIR/scratch" ]; then
		echo home
	elif [ "$(cat "$HIDE_DIR"/hidden.*/1.scratch/sub/notes 2>/dev/null)" = "secret $R" ]; then
		echo hidden
	else
		echo lost
	fi
}
stack_state() {
	# As self-uninstall reads it: comments do not count.
	if grep -Eq '^[^#]*pam_duress' "$PAMFILE"; then
		echo duress
	elif cmp -s "$PAMFILE" "$WORK/saved/$SERVICE"; then
		echo saved
	else
		echo other
	fi
}
state() {
	printf 'requests=%s mail=%s links=%s scratch=%s cryptsetup=%s stack=%s global=%s\n' \
		"$(wc -l <"$REQ_LOG")" "$(find "$MAILDIR" -name 'mail.*' | wc -l)" "$(up_in "$NS" | tr ' ' ,)" \
		"$(scratch_state)" "$(sed -n 's/^start \([^ ]*\).*/\1/p' "$CS_LOG" | tr '\n' ,)" \
		"$(stack_state)" "$([ -d /etc/duress.d ] && echo present || echo gone)"
}
# expect_state DESCRIPTION EXPECTED: after a login, the state of all five.
expect_state() {
	local now
	now=$(state)
	if [ "$now" = "$2" ]; then
		ok "$1"
	else
		not_ok "$1"
		printf '# expected: %s\n#      got: %s\n' "$2" "$now"
	fi
}
# settle: until what the logins so far started has run (actions_settled):
# then "it alone ran" can no longer turn out wrong.
settle() {
	actions_settled 10 "$RUNNER" "$UID_" || echo "# actions still run after 10 s"
}

# requests: one line per request, "METHOD PATH auth=... user=... service=... rhost=...".
requests() {
	python3 - "$REQ_LOG" <<'PY'
import json, re, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    body = r["body"]
    if r["path"] == "/hook":
        body = json.loads(body)["text"]
    def field(name):
        m = re.search(r"^%s: (.*)$" % name, body, re.M)
        return m.group(1) if m else "-"
    print(r["method"], r["path"], "auth=" + r["headers"].get("authorization", "-").replace(" ", "_"),
          "user=" + field("user"), "service=" + field("service"), "rhost=" + field("remote host"),
          "external=" + field("external address"))
PY
}
# rehearse NAME: duress test --rehearse with NAME's duress password, inside the
# network namespace as the logins are; output in $T/rh.NAME.
rehearse() {
	printf '%s\n' "${DP[$1]}" | timeout "$(bound 60)" ip netns exec "$NS" "$DURESS" test --rehearse --stdin \
		--service "$SERVICE" "$U" >"$T/rh.$1" 2>&1
}
# rehearsed NAME OWNER LINE...: its run said so, ran NAME alone as OWNER, exit 0, and printed each LINE.
rehearsed() {
	local name=$1 owner=$2 line
	shift 2
	grep -qx "rehearsing 1 action (DURESS_REHEARSE=1)" "$T/rh.$name" &&
		grep -q "^  $name (as $owner): exit 0 after " "$T/rh.$name" &&
		[ "$(grep -c '^  .* (as .*): exit ' "$T/rh.$name")" -eq 1 ] &&
		grep -qx "result: the login would succeed" "$T/rh.$name" || return 1
	for line; do grep -qF -- "$line" "$T/rh.$name" || return 1; done
}

# Each example rehearsed through `duress test --rehearse`, before any real
# login: it says what it would do, and nothing but alert's test messages
# happens.  The recorder's and sendmail's logs are then set aside, so the
# real logins below start from nothing.
run_rehearsals() {
	local s0=$1 lines
	rehearse hide
	check_diag "rehearsal: hide names ~/scratch and moves nothing" "$T/rh.hide" \
		rehearsed hide "$U" "hide: would move $HOMEDIR/scratch into a new directory $HIDE_DIR/hidden."
	rehearse net-down
	check_diag "rehearsal: net-down names the links it would bring down" "$T/rh.net-down" \
		rehearsed net-down root "net-down: would bring va down" "net-down: would bring d0 down" \
		"net-down: would keep lo up"
	if [ -n "$LOOP" ]; then
		rehearse luks-wipe
		check_diag "rehearsal: luks-wipe prints the cryptsetup command it would run on $LOOP" \
			"$T/rh.luks-wipe" rehearsed luks-wipe root "would run: cryptsetup"
		check "rehearsal: luks-wipe ran no cryptsetup command but isLuks" \
			test -z "$(grep '^start ' "$CS_LOG" | grep -v '^start isLuks ')"
		: >"$CS_LOG"
	fi
	rehearse self-uninstall
	check_diag "rehearsal: self-uninstall names the stack it would restore and the directories" \
		"$T/rh.self-uninstall" rehearsed self-uninstall root \
		"self-uninstall: would restore $PAMFILE from $WORK/saved/$SERVICE" \
		"self-uninstall: would remove /etc/duress.d"
	expect_state "rehearsal: hide, net-down, luks-wipe and self-uninstall changed nothing" "$s0"
	rehearse alert
	check_diag "rehearsal: alert reports one test message per transport" "$T/rh.alert" \
		rehearsed alert "$U" "alert: rehearsal: ntfy: sent one test message to 127.0.0.1: ok" \
		"alert: rehearsal: webhook: sent one test message to 127.0.0.1: ok" \
		"alert: rehearsal: mail: sent one test message through"
	lines=$(grep -v '"path": "/ip"' "$REQ_LOG")
	check "rehearsal: alert's two requests (ntfy, webhook) are marked as a test" \
		test "$(grep -c 'Test: ' <<<"$lines")" -eq 2 -a "$(grep -c . <<<"$lines")" -eq 2
	check "rehearsal: alert's one mail is marked as a test" \
		test "$(grep -l '^Subject: Test: ' "$MAILDIR"/mail.* 2>/dev/null | wc -l)" -eq 1
	check "rehearsal: no output line reaches the terminal unescaped (no ESC byte)" \
		test -z "$(cat "$T"/rh.* | tr -d '\n' | tr -dc '\033')"
	mkdir -p "$T/rehearsed" && mv "$REQ_LOG" "$MAILDIR"/mail.* "$T/rehearsed/" && : >"$REQ_LOG"
	expect_state "rehearsal: once set aside, nothing of the five has run" "$s0"
}
alert_done() { [ "$(wc -l <"$REQ_LOG")" -ge 3 ] && [ -n "$(find "$MAILDIR" -name 'mail.*')" ]; }
only_lo() { [ "$(up_in "$NS")" = "lo " ]; }
moved() { [ "$(scratch_state)" = hidden ]; }
isluks_done() { grep -q "^end [0-9]* isLuks -- $LOOP\$" "$CS_LOG"; }
uninstalled() { [ ! -e /etc/duress.d ] && [ "$(stack_state)" = saved ]; }

run_logins() {
	local s mail
	HIDE_DIR=$HOMEDIR/.cache/fontconfig/.old
	LINKS_UP=$(up_in "$NS" | tr ' ' ,)
	s="requests=0 mail=0 links=$LINKS_UP scratch=home cryptsetup= stack=duress global=present"
	check "setup: the links of $NS up ($LINKS_UP)" test "$LINKS_UP" = "d0,lo,va,vb,"
	expect_state "before any login: no example has run" "$s"
	run_rehearsals "$s"

	login "$RP"
	check_diag "real password: logged in" "$T/pt.out" logged_in
	settle
	expect_state "real password: none of the five ran" "$s"

	# --- alert (per-user): three requests (external address, ntfy, webhook), one mail.
	login "${DP[alert]}"
	check_diag "alert: the duress password logs in" "$T/pt.out" logged_in
	wait_for 20 alert_done
	settle
	s=${s/requests=0 mail=0/requests=3 mail=1}
	expect_state "alert: it alone ran (3 requests, 1 mail)" "$s"
	requests >"$T/requests" 2>&1
	check_diag "alert: ntfy POST with the token, the user, the service, the remote host, the external address" \
		"$T/requests" grep -qxF "POST /duress-$R auth=Bearer_tok-$R user=$U service=$SERVICE rhost=rhost-$R external=203.0.113.7" "$T/requests"
	check_diag "alert: webhook POST (JSON text) with the user and the service" "$T/requests" \
		grep -qxF "POST /hook auth=- user=$U service=$SERVICE rhost=rhost-$R external=203.0.113.7" "$T/requests"
	check_diag "alert: the external address looked up with a GET" "$T/requests" grep -q "^GET /ip " "$T/requests"
	mail=$(find "$MAILDIR" -name 'mail.*' | head -n 1)
	check_diag "alert: it ran in $NS (the message's local addresses are the namespace's)" \
		"${mail:-/dev/null}" grep -qx "local addresses: va 198.51.100.7/24" "${mail:-/dev/null}"
	check_diag "alert: the mail went through sendmail -t -oi run as $U (uid $UID_), to MAIL_TO, naming $U" \
		"${mail:-/dev/null}" test "$(sed -n -e 1,2p -e '/^To: /p' -e '/^user: /p' "${mail:-/dev/null}" | tr '\n' '|')" \
		= "uid=$UID_|args=-t -oi|To: owner-$R@example.invalid|user: $U|"

	# --- hide (per-user): ~/scratch moved under HIDE_DIR by the user.
	login "${DP[hide]}"
	check_diag "hide: the duress password logs in" "$T/pt.out" logged_in
	wait_for 10 moved
	settle
	s=${s/scratch=home/scratch=hidden}
	expect_state "hide: it alone ran (~/scratch gone, its content under HIDE_DIR)" "$s"
	check "hide: the hidden directory was made by $U, mode 0700" \
		test "$(stat -c '%u %a' "$HIDE_DIR"/hidden.* 2>&1)" = "$UID_ 700"

	# --- net-down (global): every link of the namespace down but lo.
	login "${DP[net-down]}"
	check_diag "net-down: the duress password logs in" "$T/pt.out" logged_in
	wait_for 10 only_lo
	settle
	s=${s/links=$LINKS_UP/links=lo,}
	expect_state "net-down: it alone ran (in $NS only lo is up)" "$s"

	# --- luks-wipe (global), dry run: isLuks, then nothing.
	if [ -n "$LOOP" ]; then
		login "${DP[luks-wipe]}"
		check_diag "luks-wipe: the duress password logs in" "$T/pt.out" logged_in
		wait_for 10 isluks_done
		settle
		s=${s/cryptsetup=/cryptsetup=isLuks,}
		expect_state "luks-wipe: it alone ran, and ran cryptsetup isLuks only (a dry run)" "$s"
		check "luks-wipe: isLuks accepted $LOOP (so the dry run got as far as the wipe step)" \
			grep -qx "end 0 isLuks -- $LOOP" "$CS_LOG"
		check "luks-wipe: header and key slot area unchanged (sha256 of the first 16 MiB)" \
			test "$(head -c 16M "$LOOP" | sha256sum)" = "$HEADER_SUM"
		check "luks-wipe: both key slots still there" test "$("$CS_REAL" luksDump "$LOOP" | grep -c '^  [01]: luks2$')" -eq 2
	fi

	# --- self-uninstall (global), last: it removes the setup.
	login "${DP[self-uninstall]}"
	check_diag "self-uninstall: the duress password logs in" "$T/pt.out" logged_in
	wait_for 10 uninstalled
	settle
	s=${s/stack=duress global=present/stack=saved global=gone}
	expect_state "self-uninstall: it alone ran (stack restored, /etc/duress.d gone)" "$s"
	check "self-uninstall: $PAMFILE names pam_duress no more, byte for byte the saved copy" \
		cmp -s "$PAMFILE" "$WORK/saved/$SERVICE"
	check "self-uninstall: no temporary file left in /etc/pam.d" \
		test -z "$(find /etc/pam.d -maxdepth 1 -name '.*' -newer "$WORK/saved/$SERVICE")"
	check "self-uninstall: $U's ~/.duress gone, the rest of the home kept" \
		test ! -e "$HOMEDIR/.duress" -a "$(cat "$HOMEDIR/keep")" = "kept $R"
	login "${DP[alert]}"
	check_diag "self-uninstall: afterwards a duress password is a wrong password" "$T/pt.out" refused
	login "$RP"
	check_diag "self-uninstall: afterwards the real password still logs in (the stack is whole)" \
		"$T/pt.out" logged_in
}

if [ "${1:-}" = --inside ]; then
	shift
	MODULE=$1 DURESS_SRC=$2 EXAMPLES=$3
	RUNNER=$(dirname "$MODULE")/session-helper
	HERE=$(dirname "$0")
	inside
	exit 0
fi

# ============================================================================
# Outside: checks, the network namespace, the loop device, the machine's state
# ============================================================================
[ $# -eq 3 ] || {
	echo "usage: $0 MODULE DURESS_CLI EXAMPLES_DIR" >&2
	exit 2
}
require_root "not root: needs a mount namespace, a network namespace and an account"
sanitizer_built "$1" && skip_all "sanitizer-built module: pamtester cannot load it without the runtime preloaded"
missing=$(missing_tools pamtester unshare ip useradd chpasswd setpriv mount findmnt python3 curl timeout pgrep)
[ -z "$missing" ] || skip_all "missing tools:$missing (tools/deps.sh installs them)"
MODULE=$(readlink -f "$1")
DURESS_SRC=$(readlink -f "$2")
EXAMPLES=$(readlink -f "$3")
[ -f "$MODULE" ] || skip_all "no module at $1"
[ -x "$(dirname "$MODULE")/session-helper" ] || skip_all "no session-helper (the runner) next to $1"
[ -x "$(dirname "$MODULE")/fdtree" ] || skip_all "no fdtree (hide's helper) next to $1"
[ -x "$DURESS_SRC" ] || skip_all "no duress CLI at $2"
private_etc_or_rerun "$@"

START=$(date +%s%N)
R=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
NS=duress-ex-$R
LOOP=""
# shellcheck disable=SC2016 # expanded when it runs
at_exit 'ip netns del "$NS" 2>/dev/null'

# What a mistake could change on the machine (its /etc as the private root
# shows it, read-only, at $MACHINE_ETC).  Files naming pam_duress and the
# accounts of the root e2e suite (dtest_*) may come and go with older
# builds' tests on a shared machine: left out, and checked separately for
# this run's tag.
machine_state() {
	(cd "$MACHINE_ETC" && find pam.d -type f ! -exec grep -q pam_duress {} \; -print0 | sort -z | xargs -0 sha256sum)
	grep -hv '^dtest_' "$MACHINE_ETC"/{passwd,group,shadow} | sha256sum
	ip -o link show | awk '{ print $2, $3, $9 }'
	ls -d "$MACHINE_ETC/duress.d" 2>&1
}
machine_state >"$T/machine.before"

# lo, a veth pair and a dummy link (ifb without the dummy driver), all up.
make_netns() {
	local d
	ip netns add "$NS" && ip -n "$NS" link add va type veth peer name vb || return 1
	ip -n "$NS" link add d0 type dummy 2>/dev/null || ip -n "$NS" link add d0 type ifb || return 1
	for d in lo va vb d0; do ip -n "$NS" link set "$d" up || return 1; done
	# An address only this namespace has: alert's message must show it.
	ip -n "$NS" addr add 198.51.100.7/24 dev va
}
make_netns || setup_failed "network namespace $NS"

# luks-wipe's device: a LUKS2 image with two key slots on a loop device
# (formatting needs no device-mapper; opening would).
if command -v cryptsetup >/dev/null && command -v losetup >/dev/null; then
	printf 'first passphrase' >"$T/key0"
	printf 'second passphrase' >"$T/key1"
	if new_loop luks &&
		cryptsetup luksFormat --type luks2 --batch-mode --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
			--key-slot 0 --key-file "$T/key0" "$LOOP" </dev/null >"$T/luks.log" 2>&1 &&
		cryptsetup luksAddKey --batch-mode --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-slot 1 \
			--key-file "$T/key0" "$LOOP" "$T/key1" </dev/null >>"$T/luks.log" 2>&1; then
		HEADER_SUM=$(head -c 16M "$LOOP" | sha256sum)
	else
		sed 's/^/# luks setup: /' "$T/luks.log"
		LOOP=""
	fi
fi

export WORK=$T R NS LOOP HEADER_SUM
tap_part timeout "$(bound 150)" unshare -m --propagation private -- "$0" --inside "$MODULE" "$DURESS_SRC" "$EXAMPLES"
# 1: an assertion failed (or a setup step); more: killed, or timed out (124).
[ "$PART_STATUS" -le 1 ] ||
	not_ok "the run inside the namespace ended without a result (killed or timed out: exit $PART_STATUS)"

# --- afterwards, outside every namespace -----------------------------------------
machine_state >"$T/machine.after"
check_same "the machine's /etc/pam.d, passwd, group, shadow and network links are as before" \
	"$T/machine.before" "$T/machine.after"
check "no trace of this run (tag $R) in the machine's /etc" \
	test -z "$(cd "$MACHINE_ETC" && grep -rlF "$R" pam.d passwd group shadow gshadow 2>/dev/null)"
# How long it took is for reading: the bound against a hang is tap_part's timeout.
ELAPSED_MS=$((($(date +%s%N) - START) / 1000000))
echo "# elapsed: $ELAPSED_MS ms"
tap_end
