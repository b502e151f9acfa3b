"""Checks share/wireshark/feroce.lua, feroce's Wireshark dissector, with tshark:
- side-channel datagrams written by feroce's own codec (sc_capture) show every field as encoded,
  the request/ack names in the info column, and a truncated one is flagged malformed; the
  event-building messages (announce, progress, table) show their contents;
- in a `feroce gen` capture the CNP, "Unknown OpCode" to Wireshark 4.0 on its own, is a CNP to
  the right QP with BECN, and every other packet is still Wireshark's InfiniBand with the same
  opcode, QPN and PSN as without the script.
usage: tshark_lua.py FEROCE_BIN SC_CAPTURE_BIN LUA_SCRIPT"""
import subprocess
import sys
import tempfile

FEROCE, SC_CAPTURE, LUA = sys.argv[1:4]
SC_FIELDS = ["frame.number", "feroce_sc.request", "feroce_sc.ack", "feroce_sc.loc.qpn",
             "feroce_sc.loc.psn", "feroce_sc.loc.rkey", "feroce_sc.loc.va", "feroce_sc.loc.ip",
             "feroce_sc.rem.qpn", "feroce_sc.reply_port", "feroce_sc.tx.valid",
             "feroce_sc.tx.start", "feroce_sc.tx.msg_len", "feroce_sc.tx.msg_count",
             "feroce_sc.tx.gap"]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def tshark(path, fields, lua=True):
    cmd = ["tshark", "-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    if lua:
        cmd[1:1] = ["-X", "lua_script:" + LUA]
    for f in fields:
        cmd += ["-e", f]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or "Lua" in r.stderr and "rror" in r.stderr:
        fail("tshark failed: " + r.stderr.strip())
        return []
    return [line.split("\t") for line in r.stdout.splitlines()]


def norm(v):
    """tshark prints booleans as True/False (4.0) or 1/0, hex fields as 0x..., numbers plain."""
    return {"True": "1", "False": "0"}.get(v, v.lower())


def check_side_channel(tmp):
    pcap, expect = tmp + "/sc.pcap", tmp + "/sc.tsv"
    subprocess.run([SC_CAPTURE, pcap, expect], check=True)
    want = [line.rstrip("\n").split("\t") for line in open(expect)]
    got = tshark(pcap, SC_FIELDS + ["_ws.col.Info", "_ws.malformed", "_ws.expert.severity",
                                    "frame.protocols"])
    if len(got) != len(want):
        fail(f"side channel: {len(got)} frames dissected, {len(want)} written")
        return
    for w, g in zip(want, got):
        frame = w[0]
        if "feroce_sc" not in g[-1]:
            fail(f"frame {frame}: not dissected as the side channel ({g[-1]})")
            continue
        if w[1] == "eb":
            info = g[len(SC_FIELDS)]
            if "EB " + w[2] not in info:
                fail(f"frame {frame}: event-building message shown as {info!r}, want {w[2]!r}")
            continue
        if w[1] == "malformed":
            if not g[-2]:
                fail(f"frame {frame}: a truncated datagram without an expert mark")
            continue
        for name, a, b in zip(SC_FIELDS[1:], w[1:], g[1:len(SC_FIELDS)]):
            if norm(a) != norm(b) and not (a.startswith("0x") and b and int(a, 16) == int(b, 0)):
                fail(f"frame {frame}: {name} = {b!r}, encoded {a!r}")
        if g[-2] or g[-3]:
            fail(f"frame {frame}: unexpected expert info or malformed mark: {g[-3]!r} {g[-2]!r}")
    infos = [g[len(SC_FIELDS)] for g in got]
    for frame, word in [(0, "OPEN_QP"), (1, "reply ACK"), (2, "MODIFY_QP_RTS"),
                        (2, "tx-meta start"), (3, "reply NO_QP"), (4, "tx-meta stop")]:
        if word not in infos[frame]:
            fail(f"frame {frame + 1}: info column {infos[frame]!r} lacks {word!r}")
    print(f"side channel: {len(got)} frames checked")


def check_cnp(tmp):
    pcap = tmp + "/gen.pcap"
    subprocess.run([FEROCE, "gen", pcap], check=True, capture_output=True)
    base = ["frame.number", "infiniband.bth.opcode", "infiniband.bth.destqp",
            "infiniband.bth.psn", "_ws.col.Info"]
    plain = tshark(pcap, base, lua=False)
    got = tshark(pcap, base + ["feroce_cnp.opcode", "feroce_cnp.destqp", "feroce_cnp.becn",
                               "feroce_cnp.psn", "_ws.malformed"])
    cnps = 0
    for p, g in zip(plain, got):
        if g[5]:  # the script took this packet as a CNP
            cnps += 1
            if "Unknown" not in p[4]:
                fail(f"frame {g[0]}: Wireshark alone now knows the CNP ({p[4]!r}); "
                     "the test's premise changed")
            if int(g[5], 0) != 0x81 or int(g[6], 0) != 0x100 or norm(g[7]) != "1" or g[8] != "0":
                fail(f"frame {g[0]}: CNP fields {g[5:9]}")
            if "CNP to QP 0x100" not in g[4] or "Unknown" in g[4]:
                fail(f"frame {g[0]}: CNP info column {g[4]!r}")
        elif p[:4] != g[:4] or g[9]:
            fail(f"frame {g[0]}: the script changed a non-CNP packet: {p[:4]} -> {g[:4]}")
    if len(plain) != len(got) or cnps != 1:
        fail(f"{len(got)} frames with the script, {len(plain)} without, {cnps} CNPs (want 1)")
    print(f"gen capture: {len(got)} frames, {cnps} CNP, the rest unchanged")


with tempfile.TemporaryDirectory() as tmp:
    check_side_channel(tmp)
    check_cnp(tmp)
if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("wire_tshark_lua: OK")
