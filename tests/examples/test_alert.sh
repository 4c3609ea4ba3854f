#!/bin/bash
# examples/alert against http_recorder.py on 127.0.0.1 (standing in for ntfy,
# Pushover and a webhook) and a sendmail stand-in that records the mail; run
# as the runner runs actions (env -i with the PAM_* variables, /dev/null for
# stdin/stdout/stderr, cwd /).  Then through the real module: a per-user
# alert signed with --also alert.conf fires on a duress login (duress test,
# real libpam through pam_wrapper, nss_wrapper user), and editing the config
# disarms it.  TAP output.  Usage: test_alert.sh DURESS MODULE EXAMPLES_DIR
set -u
DURESS=$1
MODULE=$2
EXAMPLES=$3
RUNNER=$(readlink -f "$(dirname "$MODULE")/session-helper")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/tap.sh
. "$HERE/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$HERE/../lib/root.sh"
own_shadow_or_rerun "$@"

RECORDERS=()
WORKERS_OF=()
cleanup() {
	local p
	for p in "${RECORDERS[@]}"; do kill "$p" 2>/dev/null; done
	# Retry workers of this run's copies still alive (a failed test): ended by PID.
	for f in "${WORKERS_OF[@]}"; do
		for p in $(workers "$f"); do kill "$p" 2>/dev/null; done
	done
}
at_exit cleanup

free_port() { python3 "$HERE/http_recorder.py" --free-port; }
listens() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; } # listens PORT
start_recorder() { # start_recorder PORT LOG: waits (up to 5 s) until it listens
	python3 "$HERE/http_recorder.py" --port "$1" --log "$2" --lifetime 120 &
	RECORDERS+=($!)
	wait_for 5 listens "$1"
}
has_lines() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; } # has_lines FILE N
wait_lines() { wait_for "$3" has_lines "$1" "$2"; } # wait_lines FILE N SECONDS
# req LOG PATH EXPR: evaluates the Python expression EXPR on the last request
# to PATH (r: the request; h: its headers; b: its body); prints the result.
req() {
	python3 - "$@" <<'EOF'
import json, os, sys, urllib.parse
shown = os.environ["RHOST_SHOWN"]
log, path, expr = sys.argv[1:4]
rs = [json.loads(l) for l in open(log) if json.loads(l)["path"] == path]
if not rs:
    sys.exit("no request to " + path)
r = rs[-1]; h = r["headers"]; b = r["body"]
form = lambda: {k: v[0] for k, v in urllib.parse.parse_qs(b, keep_blank_values=True).items()}
print(eval(expr))
EOF
}
expect() { # expect DESCRIPTION WANT LOG PATH EXPR
	local desc=$1 want=$2 got
	shift 2
	got=$(req "$@" 2>&1)
	if [ "$got" = "$want" ]; then ok "$desc"; else not_ok "$desc"; echo "# want: $want" && echo "# got:  $got"; fi
}
# make_alert NAME CONF: a copy of the action reading CONF (the CONFIG line
# rewritten, as duress add does).
make_alert() {
	sed "s|^CONFIG=.*|CONFIG=$2|" "$EXAMPLES/alert" >"$1"
	chmod 700 "$1"
	WORKERS_OF+=("$1")
}
# run_action SCRIPT [PATH]: as the runner runs it; sets rc.
run_action() {
	(cd / && umask 077 && exec env -i PATH="${2:-/usr/local/bin:/usr/bin:/bin}" HOME="$T" USER=alice \
		LOGNAME=alice SHELL=/bin/sh PAM_USER=alice PAM_SERVICE=sshd PAM_RHOST="$RHOST" \
		PAM_RUSER=mallory PAM_TTY=ssh PAM_TYPE=auth PAMUSER=alice /bin/sh "$1" </dev/null >/dev/null 2>/dev/null)
	rc=$?
}
# workers SCRIPT: PIDs of the processes running this run's copy SCRIPT
# (the action's background worker has the action's command line).
workers() { pgrep -xf "/bin/sh $1" | tr '\n' ' '; }
no_workers() { [ -z "$(workers "$1")" ]; } # no_workers SCRIPT
wait_no_workers() { wait_for "$2" no_workers "$1"; } # wait_no_workers SCRIPT SECONDS

# PAM_RHOST is whatever the client says: quotes, a backslash, a newline that
# tries to forge a line of the message, a tab.
# A byte that is not UTF-8 (it would make the JSON invalid) is dropped.
RHOST=$(printf 'evil"host\\x\nexternal address: 6.6.6.6\tend\377')
export RHOST_SHOWN='evil"host\x?external address: 6.6.6.6?end'

# --- all four transports, curl (its arguments recorded by a wrapper) ---------
P=$(free_port)
start_recorder "$P" "$T/log" || not_ok "setup: recorder on 127.0.0.1:$P"
mkdir -p "$T/bin"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>%s/argv\nexec %s "$@"\n' "$T" "$(command -v curl)" >"$T/bin/curl"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>%s/argv\nexec %s "$@"\n' "$T" "$(command -v wget)" >"$T/bin/wget"
printf '#!/bin/sh\n{ echo "ARGS: $*"; cat; } >%s/mail.tmp && mv %s/mail.tmp %s/mail\n' "$T" "$T" "$T" >"$T/sendmail"
chmod 755 "$T/bin/curl" "$T/bin/wget" "$T/sendmail"
cat >"$T/all.conf" <<EOF
# every transport
TRANSPORTS=ntfy, pushover webhook,mail
NTFY_URL=http://127.0.0.1:$P/duress-topic
NTFY_TOKEN=tk_NtfySecret1
PUSHOVER_URL=http://127.0.0.1:$P/1/messages.json
PUSHOVER_TOKEN=aPushoverToken2
PUSHOVER_USER=uPushoverUser3
WEBHOOK_URL=http://127.0.0.1:$P/hooks/abc
WEBHOOK_TOKEN=WebhookSecret4
MAIL_TO=owner@example.org
MAIL_FROM=duress@example.org
SENDMAIL=$T/sendmail
EXTERNAL_IP_URL=http://127.0.0.1:$P/ip
RETRY_FOR=20
RETRY_INTERVAL=1
EOF
make_alert "$T/alert" "$T/all.conf"
run_action "$T/alert" "$T/bin:/usr/local/bin:/usr/bin:/bin"
check "curl run: the action exits 0" test $rc -eq 0
wait_lines "$T/log" 4 15
wait_for 5 test -s "$T/mail"
check "curl run: four requests (external address, ntfy, Pushover, webhook)" test "$(wc -l <"$T/log")" -eq 4
expect "external address: GET /ip" GET "$T/log" /ip 'r["method"]'

expect "ntfy: POST" POST "$T/log" /duress-topic 'r["method"]'
expect "ntfy: text/plain" "text/plain; charset=utf-8" "$T/log" /duress-topic 'h.get("content-type")'
expect "ntfy: token as a Bearer header" "Bearer tk_NtfySecret1" "$T/log" /duress-topic 'h.get("authorization")'
expect "ntfy: title and priority headers" "Login notice urgent" "$T/log" /duress-topic 'h.get("title") + " " + h.get("priority")'
expect "ntfy: user, service, remote host, tty, remote user lines" True "$T/log" /duress-topic \
	'all(l in b.split("\n") for l in ["user: alice", "service: sshd", "remote host: " + shown, "tty: ssh", "remote user: mallory"])'
expect "ntfy: host name and external address" True "$T/log" /duress-topic \
	'"host: '"$(hostname)"'" in b.split("\n") and "external address: 203.0.113.7" in b.split("\n")'
expect "ntfy: the hostile newline forged no line" False "$T/log" /duress-topic '"external address: 6.6.6.6" in [l[:26] for l in b.split("\n")]'

expect "Pushover: POST form" "POST application/x-www-form-urlencoded" "$T/log" /1/messages.json 'r["method"] + " " + h.get("content-type")'
expect "Pushover: token and user form fields" "aPushoverToken2 uPushoverUser3" "$T/log" /1/messages.json 'form()["token"] + " " + form()["user"]'
expect "Pushover: message has user, service and the remote host" True "$T/log" /1/messages.json \
	'all(l in form()["message"].split("\n") for l in ["user: alice", "service: sshd", "remote host: " + shown])'
expect "Pushover: title, no Authorization header" "Login notice None" "$T/log" /1/messages.json 'form()["title"] + " " + str(h.get("authorization"))'

expect "webhook: POST application/json" "POST application/json" "$T/log" /hooks/abc 'r["method"] + " " + h.get("content-type")'
expect "webhook: the body is valid JSON with only a text field" "['text']" "$T/log" /hooks/abc 'sorted(json.loads(b))'
expect "webhook: quotes, backslash and control characters of the remote host escaped" True "$T/log" /hooks/abc \
	'"remote host: " + shown in json.loads(b)["text"].split("\n") and "\\\"host\\\\x" in b'
expect "webhook: the body is valid UTF-8 (an invalid byte of the remote host dropped)" False "$T/log" /hooks/abc '"\ufffd" in b'
expect "webhook: user, service, external address in text" True "$T/log" /hooks/abc \
	'all(l in json.loads(b)["text"].split("\n") for l in ["user: alice", "service: sshd", "external address: 203.0.113.7"])'
expect "webhook: token as a Bearer header" "Bearer WebhookSecret4" "$T/log" /hooks/abc 'h.get("authorization")'

check "mail: sendmail -t -oi" grep -qx "ARGS: -t -oi" "$T/mail"
check "mail: To and From headers" sh -c "grep -qx 'To: owner@example.org' '$T/mail' && grep -qx 'From: duress@example.org' '$T/mail'"
check "mail: Subject names user and host" grep -qx "Subject: Login notice: alice on $(hostname)" "$T/mail"
check "mail: headers end before the body; body has service and remote host" \
	sh -c "sed '1,/^\$/d' '$T/mail' | grep -qx 'service: sshd' && sed '1,/^\$/d' '$T/mail' | grep -qxF '$(printf '%s' "remote host: $RHOST_SHOWN" | sed "s/'/'\\\\''/g")'"
check "mail: the hostile remote host made no header" test "$(sed '/^$/q' "$T/mail" | grep -c '^external')" -eq 0
check "no secret on a curl command line" test -s "$T/argv" -a "$(grep -c 'Secret\|Pushover\|Token' "$T/argv")" -eq 0
check "curl run: the worker ends after delivering" wait_no_workers "$T/alert" 10
check "no word duress on a curl command line (ps)" fails grep -qi duress "$T/argv"
expect "ntfy: the message starts with the neutral title, no rehearsal line" "Login notice" "$T/log" /duress-topic 'b.split("\n")[0]'

# --- rehearsal (DURESS_REHEARSE=1): one marked test message per transport ------
# rehearse_action SCRIPT PATH [VALUE]: as run_action, with DURESS_REHEARSE
# (1 unless VALUE), stdout in $T/r.out and stderr in $T/r.err; sets rc.
rehearse_action() {
	(cd / && umask 077 && exec env -i PATH="$2" HOME="$T" USER=alice LOGNAME=alice SHELL=/bin/sh \
		PAM_USER=alice PAM_SERVICE=sshd PAM_RHOST="$RHOST" PAM_RUSER=mallory PAM_TTY=ssh \
		PAM_TYPE=auth PAMUSER=alice DURESS_REHEARSE="${3-1}" /bin/sh "$1" </dev/null >"$T/r.out" 2>"$T/r.err")
	rc=$?
}
# n_requests LOG PATH: how many requests the recorder got for PATH.
n_requests() { python3 -c 'import json, sys; print(sum(json.loads(l)["path"] == sys.argv[2] for l in open(sys.argv[1])))' "$1" "$2"; }
: >"$T/log" && : >"$T/argv" && rm -f "$T/mail"
rehearse_action "$T/alert" "$T/bin:/usr/local/bin:/usr/bin:/bin"
# Synchronous: all is delivered when the action returns, nothing left behind.
check "rehearsal: when it returns, no worker left (no retries)" no_workers "$T/alert"
check "rehearsal: when it returns, exactly one request to each of ntfy, Pushover, webhook, and one mail" \
	test "$(n_requests "$T/log" /duress-topic) $(n_requests "$T/log" /1/messages.json) $(n_requests "$T/log" /hooks/abc) $(grep -c '^ARGS: ' "$T/mail" 2>/dev/null)" = "1 1 1 1"
check_diag "rehearsal: exit 0, stdout says each transport, its host and the result" "$T/r.out" \
	test "$rc" -eq 0 -a "$(cat "$T/r.out")" = "alert: rehearsal: ntfy: sent one test message to 127.0.0.1: ok
alert: rehearsal: pushover: sent one test message to 127.0.0.1: ok
alert: rehearsal: webhook: sent one test message to 127.0.0.1: ok
alert: rehearsal: mail: sent one test message through $T/sendmail: ok"
check "rehearsal: something on stdout, but no token, URL path or address on stdout or stderr" \
	test -s "$T/r.out" -a "$(cat "$T/r.out" "$T/r.err" | grep -cE 'Secret|Pushover|Token|duress-topic|hooks|owner@')" -eq 0
expect "rehearsal: ntfy title marked as a test" "Test: Login notice" "$T/log" /duress-topic 'h.get("title")'
expect "rehearsal: ntfy body starts with the rehearsal line" "This is a test (a rehearsal), not a real event.|Test: Login notice" \
	"$T/log" /duress-topic '"|".join(b.split("\n")[:2])'
expect "rehearsal: Pushover title marked as a test" "Test: Login notice" "$T/log" /1/messages.json 'form()["title"]'
expect "rehearsal: webhook text starts with the rehearsal line" "This is a test (a rehearsal), not a real event." \
	"$T/log" /hooks/abc 'json.loads(b)["text"].split("\n")[0]'
check "rehearsal: mail subject marked as a test" grep -qx "Subject: Test: Login notice: alice on $(hostname)" "$T/mail"

# A transport that cannot be reached: tried once, said so, exit non-zero.
P4=$(free_port)
sed -e 's/^TRANSPORTS=.*/TRANSPORTS=ntfy webhook/' -e "s|^WEBHOOK_URL=.*|WEBHOOK_URL=http://127.0.0.1:$P4/hooks/abc|" \
	-e 's/^RETRY_FOR=.*/RETRY_FOR=60/' "$T/all.conf" >"$T/half.conf"
make_alert "$T/alert-half" "$T/half.conf"
: >"$T/log"
rehearse_action "$T/alert-half" "$T/bin:/usr/local/bin:/usr/bin:/bin"
check "rehearsal, webhook unreachable: exit non-zero" test "$rc" -ne 0
check_diag "rehearsal, webhook unreachable: ntfy ok, webhook failed" "$T/r.out" \
	test "$(cut -d: -f3,5 "$T/r.out" | tr '\n' ,)" = " ntfy: ok, webhook: failed,"
check_diag "rehearsal, webhook unreachable: one line on stderr names it" "$T/r.err" \
	test "$(cat "$T/r.err")" = "alert: rehearsal: not delivered through: webhook"
check "rehearsal, webhook unreachable: no retry worker left" no_workers "$T/alert-half"

# DURESS_REHEARSE=0 or empty: a real run (detached, nothing on stdout, no test mark).
for v in 0 ''; do
	: >"$T/log"
	rehearse_action "$T/alert" "$T/bin:/usr/local/bin:/usr/bin:/bin" "$v"
	wait_lines "$T/log" 4 15
	check "DURESS_REHEARSE='$v': a real run (exit 0, nothing on stdout, title not marked)" \
		test "$rc" -eq 0 -a ! -s "$T/r.out" -a "$(req "$T/log" /duress-topic 'h.get("title")' 2>&1)" = "Login notice"
	wait_no_workers "$T/alert" 10
done

# --- wget instead of curl --------------------------------------------------
: >"$T/argv"
sed -e 's/^TRANSPORTS=.*/TRANSPORTS=ntfy webhook/' "$T/all.conf" >"$T/wget.conf"
echo HTTP_CLIENT=wget >>"$T/wget.conf"
make_alert "$T/alert-wget" "$T/wget.conf"
: >"$T/log"
run_action "$T/alert-wget" "$T/bin:/usr/local/bin:/usr/bin:/bin"
wait_lines "$T/log" 3 15
expect "wget: ntfy token header, by Wget" "Bearer tk_NtfySecret1 Wget" "$T/log" /duress-topic 'h.get("authorization") + " " + h.get("user-agent")[:4]'
expect "wget: webhook JSON parses, has the user" True "$T/log" /hooks/abc '"user: alice" in json.loads(b)["text"].split("\n")'
check "no secret on a wget command line" test -s "$T/argv" -a "$(grep -c 'Secret' "$T/argv")" -eq 0

# --- Wi-Fi networks, from nmcli or iw stand-ins (SSIDs are hostile too) --------
mkdir -p "$T/nm" "$T/iw"
cat >"$T/nm/nmcli" <<'EOF'
#!/bin/sh
[ "$*" = "-t -f SSID,BSSID,SIGNAL device wifi list --rescan no" ] || exit 1
printf '%s\n' 'Cafe "Free\:WiFi":AA\:BB\:CC\:DD\:EE\:01:80' 'Home:AA\:BB\:CC\:DD\:EE\:02:41'
EOF
cat >"$T/iw/iw" <<'EOF'
#!/bin/sh
case "$*" in
dev) printf 'phy#0\n\tInterface wlan0\n\t\ttype managed\n' ;;
"dev wlan0 scan dump") printf 'BSS 11:22:33:44:55:66(on wlan0)\n\tsignal: -40.00 dBm\n\tSSID: Office\nBSS 11:22:33:44:55:77(on wlan0)\n\tSSID: Lab\n' ;;
*) exit 1 ;;
esac
EOF
chmod 755 "$T/nm/nmcli" "$T/iw/iw"
sed -e 's/^TRANSPORTS=.*/TRANSPORTS=webhook/' "$T/all.conf" >"$T/wifi.conf"
make_alert "$T/alert-wifi" "$T/wifi.conf"
: >"$T/log"
run_action "$T/alert-wifi" "$T/nm:/usr/local/bin:/usr/bin:/bin"
wait_lines "$T/log" 2 15
expect "Wi-Fi through nmcli: SSIDs, BSSIDs, signal, escaped colons undone" \
	'wifi: Cafe "Free-WiFi" (AA-BB-CC-DD-EE-01, 80%); Home (AA-BB-CC-DD-EE-02, 41%)' "$T/log" /hooks/abc \
	'[l for l in json.loads(b)["text"].split("\n") if l.startswith("wifi:")][0]'
: >"$T/log"
run_action "$T/alert-wifi" "$T/iw:/usr/local/bin:/usr/bin:/bin"
wait_lines "$T/log" 2 15
expect "Wi-Fi through iw scan dump: SSIDs and BSSIDs" 'wifi: Office (11:22:33:44:55:66); Lab (11:22:33:44:55:77)' \
	"$T/log" /hooks/abc '[l for l in json.loads(b)["text"].split("\n") if l.startswith("wifi:")][0]'
echo WIFI=no >>"$T/wifi.conf"
: >"$T/log"
run_action "$T/alert-wifi" "$T/iw:/usr/local/bin:/usr/bin:/bin"
wait_lines "$T/log" 2 15
expect "WIFI=no: no wifi line" False "$T/log" /hooks/abc 'any(l.startswith("wifi:") for l in json.loads(b)["text"].split("\n"))'

# --- network down: the server starts late, the detached worker delivers ------
P2=$(free_port)
cat >"$T/late.conf" <<EOF
TRANSPORTS=webhook
WEBHOOK_URL=http://127.0.0.1:$P2/late
RETRY_FOR=60
RETRY_INTERVAL=1
TIMEOUT=2
EOF
make_alert "$T/alert-late" "$T/late.conf"
(cd / && exec env -i PATH=/usr/bin:/bin PAM_USER=alice PAM_SERVICE=login /bin/sh "$T/alert-late" </dev/null >/dev/null 2>&1) &
action=$!
wait "$action"
rc=$?
check "network down: the action exits 0" test $rc -eq 0
check "network down: the action process is gone" sh -c "! kill -0 $action 2>/dev/null"
w=$(workers "$T/alert-late")
check "network down: a retry worker is alive, detached from the action" \
	sh -c "[ -n '$w' ] && for p in $w; do [ \"\$(ps -o ppid= -p \$p | tr -d ' ')\" != $action ] || exit 1; done"
check "network down: nothing delivered yet" test ! -s "$T/late.log"
sleep 1.5
start_recorder "$P2" "$T/late.log" || not_ok "setup: late recorder"
check "network up: the retry delivers it" wait_lines "$T/late.log" 1 15
expect "network up: delivered body has the user" True "$T/late.log" /late '"user: alice" in json.loads(b)["text"].split("\n")'
check "network up: the worker ends" wait_no_workers "$T/alert-late" 10

# --- retries are bounded: no server ever ----------------------------------------
P3=$(free_port)
printf 'TRANSPORTS=ntfy\nNTFY_URL=http://127.0.0.1:%s/never\nRETRY_FOR=2\nRETRY_INTERVAL=1\nTIMEOUT=1\n' "$P3" >"$T/never.conf"
make_alert "$T/alert-never" "$T/never.conf"
run_action "$T/alert-never"
check "never up: the worker gives up after RETRY_FOR" wait_no_workers "$T/alert-never" 15

# --- configuration errors are reported, synchronously --------------------------
make_alert "$T/alert-missing" "$T/missing.conf"
out=$(cd / && env -i PATH=/usr/bin:/bin /bin/sh "$T/alert-missing" 2>&1 </dev/null)
check "missing config: exit 1 and says so" test $? -eq 1 -a "$out" = "alert: cannot read $T/missing.conf"
printf 'TRANSPORTS=pigeon\n' >"$T/bad.conf"
make_alert "$T/alert-bad" "$T/bad.conf"
out=$(cd / && env -i PATH=/usr/bin:/bin /bin/sh "$T/alert-bad" 2>&1 </dev/null)
check "unknown transport: exit 1 and says so" test $? -eq 1 -a "$out" = "alert: unknown transport pigeon"

# --- through the real module: a per-user action signed with --also ------------
if [ "$(id -u)" -eq 0 ]; then uid=20001 gid=20001; else uid=$(id -u) gid=$(id -g); fi
hash=$(openssl passwd -6 'Real-pw-1')
D=$T/home/alice/.duress
mkdir -p "$T/pam.d" "$T/home/alice"
mkdir -m 700 "$D"
printf 'root:x:0:0:root:/root:/bin/sh\nalice:%s:%s:%s:Alice:%s:/bin/sh\n' "$hash" "$uid" "$gid" "$T/home/alice" >"$T/passwd"
printf 'root:x:0:\nalice:x:%s:\n' "$gid" >"$T/group"
printf 'auth [success=2 default=ignore] pam_unix.so nodelay\nauth [success=1 default=ignore] %s global_dir=%s/none runner=%s\nauth requisite pam_deny.so\nauth required pam_permit.so\naccount required pam_permit.so\n' "$MODULE" "$T" "$RUNNER" >"$T/pam.d/duress-alert-test"
printf 'TRANSPORTS=webhook\nWEBHOOK_URL=http://127.0.0.1:%s/real\nWEBHOOK_TOKEN=RealSecret5\nRETRY_FOR=10\nRETRY_INTERVAL=1\n' "$P" >"$D/alert.conf"
chmod 600 "$D/alert.conf"
sed "s|^CONFIG=.*|CONFIG=$D/alert.conf|" "$EXAMPLES/alert" >"$D/alert"
chmod 700 "$D/alert"
"$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost --also "$D/alert.conf" "$D/alert" <<<"Duress-pw-2" >"$T/sign.out" 2>&1
check "duress sign --also alert.conf: exit 0" test $? -eq 0
chown -R "$uid:$gid" "$T/home/alice"
pam_env() {
	env LD_PRELOAD="${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN }libpam_wrapper.so libnss_wrapper.so" \
		PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$T/pam.d" \
		NSS_WRAPPER_PASSWD="$T/passwd" NSS_WRAPPER_GROUP="$T/group" "$@"
}
run_check() {
	out=$(pam_env "$DURESS" check --user alice --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
	echo "${out//$'\n'/$'\n'# }" | sed '1s/^/# /'
}
run_check
check "duress check: the alert is ARMED" grep -qx "$D/alert: ARMED" <<<"$out"
: >"$T/log"
out=$(pam_env "$DURESS" test --stdin --service duress-alert-test alice <<<"Duress-pw-2" 2>&1)
check "duress login: the login would succeed" grep -qx "result: the login would succeed" <<<"$out"
check "duress login: the alert arrives" wait_lines "$T/log" 1 15
expect "duress login: user, service, Bearer token" "True Bearer RealSecret5" "$T/log" /real \
	'str(all(l in json.loads(b)["text"].split("\n") for l in ["user: alice", "service: duress-alert-test"])) + " " + h.get("authorization")'

printf '# edited\n' >>"$D/alert.conf"
run_check
check "config edited: duress check says content changed since signing" \
	grep -qxF "$D/alert: SKIPPED: content changed since signing; fix: if the change is yours, sign it again: duress sign --also $D/alert.conf $D/alert" <<<"$out"
: >"$T/log"
out=$(pam_env "$DURESS" test --stdin --service duress-alert-test alice <<<"Duress-pw-2" 2>&1)
check "config edited: the duress password no longer logs in" grep -qx "result: the login would be refused" <<<"$out"
# An action that ran anyway would have left the runner or its delivery
# worker running when the login returned: once neither is, nothing more is
# sent.  The worker runs from the runner's memfd (/bin/sh /dev/fd/N), so it
# is found by the PAM_SERVICE the runner put in its environment.
no_worker_left() { ! grep -qzx 'PAM_SERVICE=duress-alert-test' /proc/[0-9]*/environ 2>/dev/null; }
settled() { actions_settled 15 "$RUNNER" && wait_for 15 no_worker_left; }
check "config edited: no runner or alert worker left" settled
check "config edited: nothing is sent" test ! -s "$T/log"

tap_end
