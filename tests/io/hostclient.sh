#!/bin/sh
# feroce send (front-end role) driven the way the Rust host client feroce-rs drives the firmware:
# OPEN_QP and no MODIFY_QP_RTS; a tx-meta start whose first byte is 0x01 (info valid, no request)
# and whose loc QPN is 0 (the QP is named by rem QPN only); CLOSE_QP with loc QPN 0. The data is
# received by feroce recv in manual mode with the QP parameters the client announced: every
# message arrives verified, and send closes the QP and exits (--once).
set -eu
BIN=$1
PY=/usr/bin/python3
D=$(mktemp -d)
PFX=127.$((100 + $$ % 100)).$((($$ / 100) % 250 + 3))
FE=$PFX.2
HOST=$PFX.1
cleanup() {
    [ -n "${SPID:-}" ] && kill "$SPID" 2>/dev/null
    [ -n "${RPID:-}" ] && kill "$RPID" 2>/dev/null
    rm -rf "$D"
}
trap cleanup EXIT INT TERM

"$BIN" send --bind $FE --once --line-rate 2Gbps --json >"$D/send.json" 2>"$D/send.err" &
SPID=$!
sleep 0.3
N=500
$PY - "$FE" "$HOST" "$BIN" "$D" "$N" <<'PYEOF'
import json, socket, struct, subprocess, sys, time
fe, host, feroce, d, n = sys.argv[1:6]
ipn = lambda a: struct.unpack(">L", socket.inet_aton(a))[0]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((host, 17186))
s.settimeout(3.0)
HQPN, HPSN, HRKEY, HVA = 17, 0, 0x1000, 0x100000000  # given to feroce recv (--psn --rkey)


def msg(flags, loc, rem, txf=0, length=0, count=0):
    b = struct.pack(">B", flags) + struct.pack(">LLLQL", *loc) + struct.pack(">LLLQL", *rem)
    b += struct.pack(">HBLLL", 17186, txf, length, count, 0)
    assert len(b) == 64
    return b


# OPEN_QP as feroce-rs packs it (QpFlags::new always sets info valid)
s.sendto(msg(0x03, (HQPN, HPSN, HRKEY, HVA, ipn(host)), (0, 0, 0, 0, ipn(fe))), (fe, 17185))
r, _ = s.recvfrom(256)
assert len(r) == 64 and r[0] & 0x10 and (r[0] >> 5) & 7 == 1, "OPEN_QP not ACKed: %r" % r[:1]
feqpn = struct.unpack(">L", r[1:5])[0]
print("OPEN_QP ACKed, front-end QPN", feqpn)
recv = subprocess.Popen([feroce, "recv", "--bind", host, "--manual", "1", "--peer", fe,
                         "--peer-qpn", str(feqpn), "--psn", str(HPSN), "--rkey", str(HRKEY), "--count", n, "--msg-size", "4K",
                         "--timeout", "30s", "--json", "--interval", "0"],
                        stdout=open(d + "/recv.json", "w"), stderr=open(d + "/recv.err", "w"))
time.sleep(0.3)
# tx-meta start, no MODIFY before it: first byte 0x01, loc QPN 0
s.sendto(msg(0x01, (0, 0, 0, 0, ipn(host)), (feqpn, 0, 0, 0, ipn(fe)), 0x0F, 4096, int(n)),
         (fe, 17185))
rc = recv.wait(timeout=60)
out = json.load(open(d + "/recv.json")) if rc == 0 else None
assert rc == 0 and out["ok"], "recv: exit %d: %s" % (rc, open(d + "/recv.err").read())
print("stream:", out["total"]["msgs"], "messages verified")
# CLOSE_QP with loc QPN 0
s.sendto(msg(0x09, (0, 0, 0, 0, ipn(host)), (feqpn, 0, 0, 0, ipn(fe))), (fe, 17185))
r, _ = s.recvfrom(256)
assert r[0] & 0x10 and (r[0] >> 5) & 7 == 1 and (r[0] >> 1) & 7 == 4, "CLOSE not ACKed: %#x" % r[0]
print("CLOSE_QP ACKed")
PYEOF
wait "$SPID" || { echo "feroce send failed"; cat "$D/send.err"; exit 1; }
SPID=
echo "io_hostclient: OK"
