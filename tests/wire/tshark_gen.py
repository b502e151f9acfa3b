"""Checks `feroce gen` captures against Wireshark's InfiniBand/RoCEv2 dissector (tshark).

For several variants (IPv4, IPv6, 802.1Q, raw IP, MTUs), every packet must be dissected as
eth/ip/udp/infiniband with no malformed-packet mark and no expert info of warning severity or
above, and tshark's fields must equal both the script's expected sequence (opcode, QPN, PSN) and
what `feroce decode --json` reports (two independent decoders of the same bytes)."""
import json
import os
import subprocess
import sys
import tempfile

FEROCE = sys.argv[1]
PI_WARN = 0x00600000

# The scripted exchange (see `feroce gen --help`): opcode, destination QPN, PSN.
D, H = 0x11, 0x100  # data goes to the server's QP 0x11, responses to the front-end's QP 0x100
EXPECTED = [
    (0x06, D, 0xFFFFFD), (0x07, D, 0xFFFFFE), (0x08, D, 0xFFFFFF), (0x11, H, 0xFFFFFF),
    (0x0B, D, 0), (0x81, H, 0), (0x11, H, 0),
    (0x04, D, 1), (0x11, H, 1), (0x04, D, 1), (0x11, H, 1),
    (0x06, D, 2), (0x08, D, 4), (0x11, H, 3), (0x07, D, 3), (0x08, D, 4), (0x11, H, 4),
]
FIELDS = ["frame.number", "frame.protocols", "infiniband.bth.opcode", "infiniband.bth.destqp",
          "infiniband.bth.psn", "infiniband.bth.a", "infiniband.bth.padcnt",
          "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
          "infiniband.aeth.syndrome", "infiniband.aeth.msn", "infiniband.immdt",
          "ip.dsfield.ecn", "ipv6.tclass.ecn", "ip.dsfield.dscp", "ipv6.tclass.dscp",
          "vlan.priority", "udp.dstport", "_ws.expert.severity", "_ws.malformed"]
VARIANTS = [[], ["--ipv6"], ["--vlan", "100", "--mtu", "4096"],
            ["--ipv6", "--vlan", "7", "--mtu", "256"], ["--raw-ip", "--mtu", "2048"],
            ["--ipv6", "--raw-ip"]]

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def num(s):
    return int(s, 0) if s else None


def tshark(path, raw_ip):
    cmd = ["tshark", "-r", path, "-o", "udp.check_checksum:TRUE", "-T", "fields",
           "-E", "separator=\t", "-E", "occurrence=f"]
    for f in FIELDS:
        cmd += ["-e", f]
    if raw_ip:  # tshark guesses IP for LINKTYPE_RAW by itself; nothing to add
        pass
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        cols = line.split("\t")
        if len(cols) != len(FIELDS):
            continue  # "Running as root..." noise goes to stderr, but be safe
        rows.append(dict(zip(FIELDS, cols)))
    return rows


def expert_severities(path):
    """All expert severities of the file (occurrence=a: every item, not just the first)."""
    out = subprocess.run(["tshark", "-r", path, "-o", "udp.check_checksum:TRUE", "-T", "fields",
                          "-E", "occurrence=a", "-E", "aggregator=,", "-e", "frame.number",
                          "-e", "_ws.expert.severity", "-e", "_ws.expert.message"],
                         check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        cols = line.split("\t")
        if len(cols) == 3 and cols[1]:
            res[int(cols[0])] = ([int(x) for x in cols[1].split(",")], cols[2])
    return res


def check(variant, tmp):
    name = " ".join(variant) or "default"
    path = os.path.join(tmp, "gen.pcap")
    subprocess.run([FEROCE, "gen", path] + variant, check=True, capture_output=True)
    dec = [json.loads(l) for l in subprocess.run([FEROCE, "decode", "--json", path], check=True,
                                                 capture_output=True, text=True).stdout.splitlines()]
    rows = tshark(path, "--raw-ip" in variant)
    if len(rows) != len(EXPECTED) or len(dec) != len(EXPECTED):
        fail(f"[{name}] packets: tshark {len(rows)}, feroce decode {len(dec)}, "
             f"expected {len(EXPECTED)}")
        return
    experts = expert_severities(path)
    v6 = "--ipv6" in variant
    for i, (r, d, (op, qpn, psn)) in enumerate(zip(rows, dec, EXPECTED)):
        n = i + 1
        where = f"[{name}] packet {n}"
        if not r["frame.protocols"].endswith(":udp:infiniband") and \
           ":udp:infiniband:" not in r["frame.protocols"]:
            fail(f"{where}: not dissected as InfiniBand over UDP: {r['frame.protocols']}")
            continue
        if r["_ws.malformed"]:
            fail(f"{where}: tshark marks it malformed")
        if n in experts and max(experts[n][0]) >= PI_WARN:
            fail(f"{where}: tshark expert info: {experts[n][1]}")
        if num(r["udp.dstport"]) != 4791:
            fail(f"{where}: UDP port {r['udp.dstport']}")
        got = (num(r["infiniband.bth.opcode"]), num(r["infiniband.bth.destqp"]),
               num(r["infiniband.bth.psn"]))
        if got != (op, qpn, psn):
            fail(f"{where}: tshark opcode/QPN/PSN {got}, expected {(op, qpn, psn)}")
        if not d.get("roce") or d.get("icrc") != "ok":
            fail(f"{where}: feroce decode: {d}")
            continue
        if (d["opcode_num"], d["qpn"], d["psn"]) != got:
            fail(f"{where}: feroce decode {(d['opcode_num'], d['qpn'], d['psn'])} vs tshark {got}")
        if bool(num(r["infiniband.bth.a"])) != d["ackreq"]:
            fail(f"{where}: AckReq tshark {r['infiniband.bth.a']} feroce {d['ackreq']}")
        if num(r["infiniband.bth.padcnt"]) != d["pad"]:
            fail(f"{where}: pad count tshark {r['infiniband.bth.padcnt']} feroce {d['pad']}")
        if r["infiniband.reth.va"]:
            t = (num(r["infiniband.reth.va"]), num(r["infiniband.reth.r_key"]),
                 num(r["infiniband.reth.dmalen"]))
            if t != (d.get("va"), d.get("rkey"), d.get("dma_len")):
                fail(f"{where}: RETH tshark {t} feroce {d}")
        elif "va" in d and op != 0x81:
            fail(f"{where}: tshark shows no RETH")
        if r["infiniband.aeth.syndrome"] or "syndrome" in d:
            t = (num(r["infiniband.aeth.syndrome"]), num(r["infiniband.aeth.msn"]))
            if t != (d.get("syndrome"), d.get("msn")):
                fail(f"{where}: AETH tshark {t} feroce {d.get('syndrome'), d.get('msn')}")
        if r["infiniband.immdt"] or "imm" in d:
            t = int(r["infiniband.immdt"].replace(":", "") or "-1", 16)
            if t != d.get("imm"):
                fail(f"{where}: ImmDt tshark {r['infiniband.immdt']} feroce {d.get('imm')}")
        ecn = num(r["ipv6.tclass.ecn"] if v6 else r["ip.dsfield.ecn"])
        dscp = num(r["ipv6.tclass.dscp"] if v6 else r["ip.dsfield.dscp"])
        ecn_names = ["Not-ECT", "ECT(1)", "ECT(0)", "CE"]
        if ecn is None or ecn_names[ecn] != d["ecn"] or dscp != d["dscp"]:
            fail(f"{where}: ECN/DSCP tshark {ecn}/{dscp} feroce {d['ecn']}/{d['dscp']}")
        if op == 0x81:  # the design's CNP rules
            if (dscp, ecn) != (48, 0) or not d["becn"] or d["psn"] != 0 or d["payload_len"] != 16:
                fail(f"{where}: CNP not DSCP 48 / Not-ECT / BECN / PSN 0 / 16 bytes: {d}")
            if "--vlan" in variant and num(r["vlan.priority"]) != 6:
                fail(f"{where}: CNP PCP {r['vlan.priority']}, expected 6")
        elif op in (0x06, 0x07, 0x08, 0x0B, 0x04) and ecn not in (2, 3):
            fail(f"{where}: data not ECT(0)/CE")
    ces = [d["n"] for d in dec if d.get("ecn") == "CE"]
    if ces != [5]:
        fail(f"[{name}] CE-marked packets {ces}, expected [5]")
    print(f"ok [{name}]: {len(rows)} packets match tshark")


with tempfile.TemporaryDirectory() as tmp:
    for v in VARIANTS:
        check(v, tmp)
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("tshark agrees with feroce on every packet")
