#!/bin/bash
# examples/net-down inside throwaway network namespaces (root only, SKIP
# otherwise): namespace A has lo, a veth end (its peer in namespace B), a tun
# device (what OpenVPN and other VPN clients use) and two dummy interfaces
# (ifb, another device with no hardware, on kernels without the dummy
# driver), all up.  After net-down runs in A only lo is up (or
# lo and the KEEP-listed dummy); B's end and the machine's own interfaces
# are untouched; as a non-root user it does nothing and exits 0.  The
# NetworkManager branch runs against an nmcli stand-in that records its
# calls.  Last, through the real module: net-down as a global action, signed,
# fired by a duress login (duress test through pam_wrapper, the real runner)
# run inside namespace A.  With DURESS_REHEARSE=1 (a rehearsal) it names
# the connections, devices and links it would close and closes none.
# TAP output.  Usage: test_net_down.sh DURESS MODULE EXAMPLES_DIR
set -u
DURESS=$1
MODULE=$2
EXAMPLES=$3
RUNNER=$(dirname "$MODULE")/session-helper
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"

require_root "not root: needs network namespaces"
own_shadow_or_rerun "$@"
for t in ip setpriv; do command -v "$t" >/dev/null || skip_all "needs $t"; done

R=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
A=duress-nd-$R-a
B=duress-nd-$R-b
# shellcheck disable=SC2016 # expanded when it runs
at_exit 'ip netns del "$A" 2>/dev/null; ip netns del "$B" 2>/dev/null'

# The namespaces must not share anything with the machine: fail the whole
# run if they cannot be made, rather than touch a real interface.
virtual_add() { # virtual_add NAME: a dummy interface in A (ifb without the dummy driver)
	ip -n "$A" link add "$1" type dummy 2>/dev/null || ip -n "$A" link add "$1" type ifb
}
setup() {
	ip netns del "$A" 2>/dev/null
	ip netns del "$B" 2>/dev/null
	ip netns add "$A" && ip netns add "$B" &&
		ip -n "$A" link add va type veth peer name vb &&
		ip -n "$A" link set vb netns "$B" &&
		virtual_add dum0 && virtual_add dum1 &&
		ip netns exec "$A" ip tuntap add dev tun0 mode tun &&
		for d in lo va dum0 dum1 tun0; do ip -n "$A" link set "$d" up || return 1; done &&
		ip -n "$B" link set vb up
}
host_up() { ip -o link show up | awk -F': ' '{ print $2 }' | sort | tr '\n' ' '; }

# A copy of the action reading $T/net-down.conf (the CONFIG line rewritten,
# as duress add does).  USE_NMCLI=no: nmcli would reach the machine's own
# NetworkManager over D-Bus from inside the namespace.
sed "s|^CONFIG=.*|CONFIG=$T/net-down.conf|" "$EXAMPLES/net-down" >"$T/net-down"
chmod 755 "$T/net-down"
ACTION_PATH=/usr/local/bin:/usr/bin:/bin
run_in_a() { # run_in_a [setpriv options...]: as the runner would (clean env, /dev/null, cwd /)
	(cd / && ip netns exec "$A" "$@" env -i PATH="$ACTION_PATH" HOME=/ PAM_TYPE=auth \
		PAM_USER=alice PAM_SERVICE=login /bin/sh "$T/net-down" </dev/null >/dev/null 2>"$T/err")
}
# rehearse_in_a [setpriv options...]: run_in_a with DURESS_REHEARSE=1,
# stdout in $T/out; sets rc.
rehearse_in_a() {
	(cd / && ip netns exec "$A" "$@" env -i PATH="$ACTION_PATH" HOME=/ PAM_TYPE=auth \
		PAM_USER=alice PAM_SERVICE=login DURESS_REHEARSE=1 /bin/sh "$T/net-down" </dev/null >"$T/out" 2>"$T/err")
	rc=$?
}
all_up() { [ "$(up_in "$A")" = "dum0 dum1 lo tun0 va " ]; }
host_before=$(host_up)

printf 'USE_NMCLI=no\n' >"$T/net-down.conf"
setup || setup_failed "namespaces, veth pair, tun, dummies"
check "setup: lo, va, tun0, dum0, dum1 up in A" test "$(up_in "$A")" = "dum0 dum1 lo tun0 va "
run_in_a
rc=$?
check "no allow-list: exit 0" test $rc -eq 0
check "no allow-list: only lo is up" test "$(up_in "$A")" = "lo "
check "no allow-list: the veth peer in the other namespace is untouched" test "$(up_in "$B")" = "vb "
check "no allow-list: nothing on stderr" test ! -s "$T/err"

printf '# keep one\nKEEP=dum1\nUSE_NMCLI=no\n' >"$T/net-down.conf"
setup || setup_failed "namespaces, veth pair, tun, dummies, again"
run_in_a
rc=$?
check "KEEP=dum1: exit 0" test $rc -eq 0
check "KEEP=dum1: only lo and dum1 are up" test "$(up_in "$A")" = "dum1 lo "

printf 'KEEP=dum1,va\nUSE_NMCLI=no\nFROB=1\n' >"$T/net-down.conf"
setup || setup_failed "namespaces, veth pair, tun, dummies, again"
run_in_a
check "KEEP=dum1,va: lo, dum1 and va stay up" test "$(up_in "$A")" = "dum1 lo va "
check "an unknown key is named on stderr" grep -q "unknown key FROB" "$T/err"

setup || setup_failed "namespaces, veth pair, tun, dummies, again"
chmod 644 "$T/net-down.conf"
run_in_a setpriv --reuid=65534 --regid=65534 --clear-groups
rc=$?
check "not root: exit 0" test $rc -eq 0
check "not root: says it needs root" grep -q "needs root" "$T/err"
check "not root: nothing brought down" test "$(up_in "$A")" = "dum0 dum1 lo tun0 va "

# --- NetworkManager: an nmcli stand-in says it runs, with three connections ---
mkdir -p "$T/bin"
printf '%s\n' '#!/bin/sh' "echo \"\$*\" >>'$T/nmcli.log'" 'case "$*" in' \
	'"-t -f RUNNING general") echo running ;;' \
	'"-t -f UUID,TYPE connection show --active") printf "u-eth:802-3-ethernet\nu-vpn:vpn\nu-wg:wireguard\n" ;;' \
	'esac' >"$T/bin/nmcli"
chmod 755 "$T/bin/nmcli"
ACTION_PATH=$T/bin:/usr/local/bin:/usr/bin:/bin
printf 'USE_NMCLI=auto\n' >"$T/net-down.conf"
setup || setup_failed "namespaces, veth pair, tun, dummies, again"
: >"$T/nmcli.log"
run_in_a
check "nmcli: VPN and WireGuard connections closed, ethernet not" \
	test "$(grep '^connection down' "$T/nmcli.log" | tr '\n' ,)" = "connection down uuid u-vpn,connection down uuid u-wg,"
check "nmcli: no KEEP: networking off, after the VPNs" test "$(tail -n 1 "$T/nmcli.log")" = "networking off"
check "nmcli: ip link still brings the rest down: only lo up" test "$(up_in "$A")" = "lo "
printf 'USE_NMCLI=auto\nKEEP=dum1\n' >"$T/net-down.conf"
setup || setup_failed "namespaces, veth pair, tun, dummies, again"
: >"$T/nmcli.log"
run_in_a
check "nmcli with KEEP=dum1: each other interface disconnected, no networking off" \
	test "$(grep -v '^connection\|^-t ' "$T/nmcli.log" | sort | tr '\n' ,)" = "device disconnect dum0,device disconnect tun0,device disconnect va,"
check "nmcli with KEEP=dum1: lo and dum1 up" test "$(up_in "$A")" = "dum1 lo "
printf 'USE_NMCLI=no\n' >"$T/net-down.conf"
setup || setup_failed "namespaces, veth pair, tun, dummies, again"
: >"$T/nmcli.log"
run_in_a
check "USE_NMCLI=no: nmcli never called" test ! -s "$T/nmcli.log"

# --- rehearsal (DURESS_REHEARSE=1): the links it would close, none closed ---
printf 'USE_NMCLI=no\nKEEP=dum1\n' >"$T/net-down.conf"
setup || setup_failed "namespaces, veth pair, tun, dummies, again"
rehearse_in_a
check_diag "rehearsal: exit 0, names each link it would bring down and each it keeps" "$T/out" test \
	"$rc $(sort "$T/out" | tr '\n' ,)" = "0 net-down: would bring dum0 down (ip link set dev dum0 down),\
net-down: would bring tun0 down (ip link set dev tun0 down),net-down: would bring va down (ip link set dev va down),\
net-down: would keep dum1 up,net-down: would keep lo up,"
check "rehearsal: every link still up, in A and B" sh -c "[ '$(up_in "$A")' = 'dum0 dum1 lo tun0 va ' ] && [ '$(up_in "$B")' = 'vb ' ]"
printf 'USE_NMCLI=auto\n' >"$T/net-down.conf"
: >"$T/nmcli.log"
rehearse_in_a
check_diag "rehearsal with NetworkManager: exit 0, names the VPN and WireGuard connections and networking off" "$T/out" test \
	"$rc $(grep -c 'would close the VPN/WireGuard connection u-vpn \|would close the VPN/WireGuard connection u-wg \|would turn NetworkManager.s networking off' "$T/out")" = "0 3"
check "rehearsal with NetworkManager: and the links ip would bring down" \
	test "$(grep -c 'would bring .* down' "$T/out")" = 4
check_diag "rehearsal with NetworkManager: nmcli only asked, never told to close anything" "$T/nmcli.log" \
	fails grep -qv '^-t ' "$T/nmcli.log"
check "rehearsal with NetworkManager: every link still up" all_up
printf 'USE_NMCLI=auto\nKEEP=dum1\n' >"$T/net-down.conf"
: >"$T/nmcli.log"
rehearse_in_a
check_diag "rehearsal with NetworkManager and KEEP=dum1: names the devices it would disconnect" "$T/out" \
	test "$(grep -o 'would disconnect [a-z0-9]*' "$T/out" | sort | tr '\n' ,)" = "would disconnect dum0,would disconnect tun0,would disconnect va,"
check "rehearsal with NetworkManager and KEEP=dum1: nothing disconnected, every link up" \
	sh -c "! grep -qv '^-t ' '$T/nmcli.log' && [ '$(up_in "$A")' = 'dum0 dum1 lo tun0 va ' ]"
ACTION_PATH=/usr/local/bin:/usr/bin:/bin
rehearse_in_a setpriv --reuid=65534 --regid=65534 --clear-groups
check "rehearsal, not root: exit non-zero, one line: needs root; every link still up" \
	sh -c "[ $rc -ne 0 ] && [ '$(cat "$T/err")' = 'net-down: needs root: it runs only as a global action' ] && [ '$(up_in "$A")' = 'dum0 dum1 lo tun0 va ' ]"

# --- through the real module: a global action, a duress login inside A ------
mkdir -p "$T/pam.d" "$T/home/alice"
mkdir -m 700 "$T/global"
hash=$(openssl passwd -6 'Real-pw-1')
printf 'root:x:0:0:root:/root:/bin/sh\nalice:%s:20001:20001:Alice:%s:/bin/sh\n' "$hash" "$T/home/alice" >"$T/passwd"
printf 'root:x:0:\nalice:x:20001:\n' >"$T/group"
printf 'auth [success=2 default=ignore] pam_unix.so nodelay\nauth [success=1 default=ignore] %s global_dir=%s/global user_dir= runner=%s wait=10\nauth requisite pam_deny.so\nauth required pam_permit.so\naccount required pam_permit.so\n' \
	"$MODULE" "$T" "$RUNNER" >"$T/pam.d/duress-test"
printf 'USE_NMCLI=no\n' >"$T/net-down.conf"
chmod 600 "$T/net-down.conf"
sed "s|^CONFIG=.*|CONFIG=$T/net-down.conf|" "$EXAMPLES/net-down" >"$T/global/net-down"
chmod 700 "$T/global/net-down"
"$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost --also "$T/net-down.conf" "$T/global/net-down" <<<"Duress-pw-2" >"$T/sign.out" 2>&1
check "real login: duress sign --also net-down.conf" test $? -eq 0
duress_login() { # duress_login PASSWORD: duress test inside A, the real libpam via pam_wrapper
	ip netns exec "$A" env LD_PRELOAD="${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN }libpam_wrapper.so libnss_wrapper.so" PAM_WRAPPER=1 \
		PAM_WRAPPER_SERVICE_DIR="$T/pam.d" NSS_WRAPPER_PASSWD="$T/passwd" NSS_WRAPPER_GROUP="$T/group" \
		"$DURESS" test --stdin --service duress-test alice <<<"$1" 2>&1
}
only_lo() { [ "$(up_in "$A")" = "lo " ]; }
setup || setup_failed "namespaces, veth pair, tun, dummies, again"
out=$(duress_login 'Wrong-pw-3')
check "real login: a wrong password is refused" grep -qx "result: the login would be refused" <<<"$out"
check "real login: a wrong password leaves every link up" test "$(up_in "$A")" = "dum0 dum1 lo tun0 va "
out=$(duress_login 'Duress-pw-2')
check "real login: the duress password logs in" grep -qx "result: the login would succeed" <<<"$out"
check "real login: afterwards only lo is up in A" wait_for 10 only_lo
check "real login: the veth end in B is untouched" test "$(up_in "$B")" = "vb "

check "the machine's own interfaces are as before" test "$(host_up)" = "$host_before"
tap_end
