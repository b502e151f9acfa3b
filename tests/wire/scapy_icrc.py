"""ICRC interop with scapy's RoCE layer.

A. `feroce gen --random` frames (every RC opcode and CNP, random fields/ECN/TTL/VLAN/sizes):
   IPv4: scapy.contrib.roce recomputes the ICRC (BTH.compute_icrc) and must get the same bytes.
   IPv6: scapy.contrib.roce has no IPv6 ICRC, so the ICRC is recomputed here from scapy's parsed
   fields (traffic class, flow label, hop limit, UDP checksum, BTH FECN/BECN/resv6 set to
   all-ones, eight 0xFF bytes in front, zlib CRC-32, least significant byte first). The same
   masking on IPv4 is checked against scapy's own IPv4 ICRC first, on every IPv4 packet.
B. Random packets built by scapy (same opcodes, headers as raw bytes, random pads) are written
   to a pcap; `feroce decode --json` must find every ICRC ok and the same opcode/QPN/PSN.
Seed: FEROCE_SEED (default 1); packet count per family: FEROCE_SCAPY_N (default 250)."""
import json
import logging
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import IP, UDP, Dot1Q, Ether, IPv6, Raw, raw, rdpcap, wrpcap  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

FEROCE = sys.argv[1]
SEED = int(os.environ.get("FEROCE_SEED", "1"))
N = int(os.environ.get("FEROCE_SCAPY_N", "250"))
failures = 0


def fail(msg):
    global failures
    failures += 1
    if failures <= 20:
        print("FAIL:", msg)


def masked_icrc(pkt):
    """ICRC from scapy's field model: mask variant fields of a copy of the IP packet."""
    ip = pkt[IPv6] if IPv6 in pkt else pkt[IP]
    m = ip.copy()
    if isinstance(m, IPv6):
        m.tc, m.fl, m.hlim = 0xFF, 0xFFFFF, 0xFF
    else:
        m.tos, m.ttl, m.chksum = 0xFF, 0xFF, 0xFFFF
    m[UDP].chksum = 0xFFFF
    m[BTH].fecn, m[BTH].becn, m[BTH].resv6 = 1, 1, 0x3F
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + raw(m)[:-4]) & 0xFFFFFFFF)


def scapy_icrc_v4(pkt):
    q = pkt.copy()
    q[BTH].icrc = None
    b = raw(q)
    if b[:-4] != raw(pkt)[:-4]:
        fail("scapy did not rebuild the packet byte for byte")
    return b[-4:]


def part_a(tmp):
    n = 0
    for fam, extra in (("IPv4", ["--ipv4"]), ("IPv6", ["--ipv6"]),
                       ("IPv4 raw", ["--ipv4", "--raw-ip"]), ("IPv6 raw", ["--ipv6", "--raw-ip"])):
        path = os.path.join(tmp, "a.pcap")
        cnt = N if "raw" not in fam else N // 5
        subprocess.run([FEROCE, "gen", path, "--random", str(cnt), "--seed", str(SEED),
                        "--mtu", "4096"] + extra, check=True, capture_output=True)
        pkts = rdpcap(path)
        if len(pkts) != cnt:
            fail(f"{fam}: {len(pkts)} packets read, {cnt} written")
        for i, p in enumerate(pkts):
            if "raw" in fam:
                p = (IPv6 if fam.startswith("IPv6") else IP)(raw(p))
            if BTH not in p:
                fail(f"{fam} #{i + 1}: scapy finds no BTH")
                continue
            wire = raw(p)[-4:]
            mine = masked_icrc(p)
            if IPv6 not in p:
                ref = scapy_icrc_v4(p)
                if mine != ref:
                    fail(f"{fam} #{i + 1}: the masking here {mine.hex()} != scapy {ref.hex()}")
            else:
                ref = mine
            if wire != ref:
                fail(f"{fam} #{i + 1} opcode {p[BTH].opcode:#x} len {len(p)}: feroce ICRC "
                     f"{wire.hex()}, scapy {ref.hex()}")
            n += 1
    return n


# Extension header bytes per RC opcode: (RETH, AtomicETH, AETH, AtomicAckETH, ImmDt/IETH, payload)
OPS = {}
for op in range(0x00, 0x18):
    if op == 0x15:
        continue
    reth = op in (0x06, 0x0A, 0x0B, 0x0C)
    atomic = op in (0x13, 0x14)
    aeth = op in (0x0D, 0x0F, 0x10, 0x11, 0x12)
    aack = op == 0x12
    imm = op in (0x03, 0x05, 0x09, 0x0B, 0x16, 0x17)
    payload = op <= 0x0B or op in (0x0D, 0x0E, 0x0F, 0x10, 0x16, 0x17)  # SEND/WRITE/READ resp
    OPS[op] = (reth, atomic, aeth, aack, imm, payload)
OPS[0x81] = (False, False, False, False, False, False)


def part_b(tmp):
    rnd = random.Random(SEED)
    pkts, expect = [], []
    for i in range(2 * N):
        v6 = i % 2 == 1
        op = rnd.choice(sorted(OPS))
        reth, atomic, aeth, aack, imm, payload = OPS[op]
        body = b""
        if reth:
            body += struct.pack("!QII", rnd.getrandbits(64), rnd.getrandbits(32),
                                rnd.getrandbits(32))
        if atomic:
            body += bytes(rnd.getrandbits(8) for _ in range(28))
        if aeth:
            body += struct.pack("!I", rnd.getrandbits(31))
        if aack:
            body += bytes(8)
        if imm:
            body += struct.pack("!I", rnd.getrandbits(32))
        pad = 0
        if payload:
            plen = rnd.randint(0, 4096)
            pad = (4 - plen % 4) % 4
            body += bytes(rnd.getrandbits(8) for _ in range(plen)) + bytes(pad)
        if op == 0x81:
            body = bytes(16)
        qpn, psn = rnd.getrandbits(24), rnd.getrandbits(24)
        bth = BTH(opcode=op, solicited=rnd.getrandbits(1), migreq=rnd.getrandbits(1),
                  padcount=pad, pkey=0xFFFF, fecn=rnd.getrandbits(1), becn=rnd.getrandbits(1),
                  dqpn=qpn, ackreq=rnd.getrandbits(1), psn=psn)
        tos = rnd.getrandbits(8)
        l2 = Ether(src="02:00:5e:10:00:0b", dst="b8:ce:f6:4e:21:9a")
        if rnd.random() < 0.25:
            l2 = l2 / Dot1Q(vlan=rnd.randint(1, 4094), prio=rnd.randint(0, 7))
        if v6:
            l3 = IPv6(src="fd00::b", dst="fd00::1", tc=tos, fl=rnd.getrandbits(20),
                      hlim=rnd.randint(1, 255))
        else:
            l3 = IP(src="192.168.10.11", dst="192.168.10.1", tos=tos, ttl=rnd.randint(1, 255),
                    id=rnd.getrandbits(16), flags="DF")
        p = l2 / l3 / UDP(sport=rnd.randint(49152, 65535), dport=4791, chksum=0) / bth / \
            Raw(body)
        b = bytearray(raw(p))  # IPv4: scapy fills the ICRC; IPv6: it leaves 0
        if v6:
            b[-4:] = masked_icrc(Ether(bytes(b)))
        pkts.append(Ether(bytes(b)))
        expect.append((op, qpn, psn))
    path = os.path.join(tmp, "b.pcap")
    wrpcap(path, pkts)
    out = subprocess.run([FEROCE, "decode", "--json", path], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    if len(out) != len(expect):
        fail(f"feroce decoded {len(out)} of {len(expect)} scapy packets")
    for i, (line, (op, qpn, psn)) in enumerate(zip(out, expect)):
        d = json.loads(line)
        if not d.get("roce") or d.get("icrc") != "ok":
            fail(f"scapy packet #{i + 1} ({'IPv6' if i % 2 else 'IPv4'}, opcode {op:#x}): {d}")
        elif (d["opcode_num"], d["qpn"], d["psn"]) != (op, qpn, psn):
            fail(f"scapy packet #{i + 1}: feroce {d['opcode_num'], d['qpn'], d['psn']} "
                 f"vs {(op, qpn, psn)}")
    return len(expect)


with tempfile.TemporaryDirectory() as tmp:
    na = part_a(tmp)
    nb = part_b(tmp)
print(f"seed {SEED}: {na} feroce frames checked by scapy, {nb} scapy frames checked by feroce")
if failures:
    print(f"{failures} failure(s)")
    sys.exit(1)
print("scapy and feroce agree on every ICRC")
