import json
import os
import struct
import subprocess
import sys
import tempfile

F = sys.argv[1]
bad = []


def run(*args):
    return subprocess.run([F] + list(args), capture_output=True, text=True)


def check(cond, msg):
    if not cond:
        bad.append(msg)
        print("FAIL:", msg)


def records(path):
    b = open(path, "rb").read()
    off, out = 24, []
    while off < len(b):
        _, _, cap, _ = struct.unpack("<IIII", b[off:off + 16])
        out.append(bytearray(b[off + 16:off + 16 + cap]))
        off += 16 + cap
    return b[:24], out


def write(path, hdr, recs):
    with open(path, "wb") as f:
        f.write(hdr)
        for i, r in enumerate(recs):
            f.write(struct.pack("<IIII", 1, i * 1000, len(r), len(r)) + bytes(r))


with tempfile.TemporaryDirectory() as t:
    g = os.path.join(t, "g.pcap")
    check(run("gen", g).returncode == 0, "gen failed")
    hdr, recs = records(g)
    arp = bytearray(bytes.fromhex("ffffffffffff02005e10000b0806") + bytes(28))
    dns = bytearray(recs[3])
    dns[14 + 20 + 2:14 + 20 + 4] = struct.pack("!H", 53)  # UDP port 53, IP checksum unaffected
    corrupt = bytearray(recs[0])
    corrupt[200] ^= 0x01
    short = recs[3][:40]
    m = os.path.join(t, "m.pcap")
    write(m, hdr, [recs[0], arp, dns, corrupt, short, recs[5]])
    r = run("decode", m)
    lines = r.stdout.splitlines()
    check(r.returncode == 0, f"decode exit {r.returncode}")
    check(len(lines) == 7, f"{len(lines)} lines: {r.stdout}")
    if len(lines) == 7:
        check("WRITE_FIRST" in lines[0] and "icrc=ok" in lines[0], lines[0])
        check("not RoCE: eth_type" in lines[1], lines[1])
        check("not RoCE: udp_port" in lines[2], lines[2])
        check("WRITE_FIRST" in lines[3] and "icrc=bad" in lines[3], lines[3])
        check("not RoCE: udp_short" in lines[4] or "not RoCE: ip_len" in lines[4], lines[4])
        check("CNP" in lines[5] and "becn" in lines[5] and "dscp=48" in lines[5], lines[5])
        check(lines[6] == "# 6 packets: 3 RoCE (1 with bad ICRC), 3 not RoCE", lines[6])
    j = run("decode", "--json", m)
    objs = [json.loads(x) for x in j.stdout.splitlines()]
    check([o["roce"] for o in objs] == [True, False, False, True, False, True], "json roce flags")
    check(objs[1].get("reason") == "eth_type" and objs[3].get("icrc") == "bad", "json reasons")
    check(objs[5].get("opcode") == "CNP" and objs[5].get("dscp") == 48, "json CNP")
    check(run("decode", os.path.join(t, "missing.pcap")).returncode == 1, "missing file: exit 1")
    check(run("decode").returncode == 2, "no file: exit 2")
    check(run("gen", g, "--mtu", "1000").returncode == 2, "bad MTU: exit 2")
    check(run("gen", g, "--bogus").returncode == 2, "bad option: exit 2")
    check(run("gen", "/nonexistent/dir/x.pcap").returncode == 1, "unwritable: exit 1")
    # corrupt files: the reason on stderr, exit 1, the records before it decoded
    cut = os.path.join(t, "cut.pcap")
    with open(cut, "wb") as f:
        f.write(hdr + struct.pack("<IIII", 1, 0, len(recs[0]), len(recs[0])) + bytes(recs[0]))
        f.write(struct.pack("<IIII", 1, 0, len(recs[5]), 10) + bytes(recs[5]))
    r = run("decode", cut)
    check(r.returncode == 1 and len(r.stdout.splitlines()) == 1, f"caplen > len: {r.stdout}")
    check("record 2: " in r.stderr and "only 10 on the wire" in r.stderr, r.stderr)
    with open(cut, "wb") as f:
        f.write(hdr + struct.pack("<IIII", 1, 0, len(recs[0]), len(recs[0])) + bytes(recs[0][:30]))
    r = run("decode", cut)
    check(r.returncode == 1 and "record 1: truncated" in r.stderr, f"truncated: {r.stderr}")
    # a record earlier than the first is at a negative time
    back = os.path.join(t, "back.pcap")
    with open(back, "wb") as f:
        f.write(hdr)
        for sec in (5, 4):
            f.write(struct.pack("<IIII", sec, 0, len(recs[5]), len(recs[5])) + bytes(recs[5]))
    lines = run("decode", back).stdout.splitlines()
    check(len(lines) == 3 and lines[1].startswith("2 -1.000000000 "), f"earlier record: {lines}")
    h = run("decode", "--help")
    check(h.returncode == 0 and "--json" in h.stdout, "decode --help")
    check(run("gen", "--help").returncode == 0, "gen --help")
if bad:
    sys.exit(1)
print("feroce decode/gen CLI behave as documented")
