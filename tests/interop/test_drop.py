#!/usr/bin/python3
"""Go-Back-N against Linux Soft-RoCE: `feroce send` drops data packets on purpose (its test hook:
the first transmission of 32 chosen PSNs, across the 2^24 wrap, in the middle and at the ends
of messages, back to back); rxe answers each gap with a PSN-sequence NAK, the sender goes back to
the PSN it names, and `feroce verbs-recv` in the VM still gets every byte and every immediate
in order. Both ends' counters must show it: rxe saw out-of-sequence requests, the sender got
sequence NAKs and retransmitted.

The hook's other mode, every Nth packet with retransmissions included, runs last. Purely
periodic it could never finish: a go-back window of exactly N packets that starts at a dropped
PSN lost that PSN again on every round (seen here: rxe NAKs PSN 609, the resend 609..631 is 23
packets, --drop-every 23 dropped 609 each time until the retries ran out), so the hook never
drops one PSN twice in a row."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fevm  # noqa: E402


# PSNs whose first transmission is lost (the hook takes at most 32): the wrap, pairs and runs of
# three, message boundaries of the 64 KiB and 1 MiB streams, and the last packets of streams.
DROPS = ",".join(str(p) for p in (
    0xFFFFFE, 0xFFFFFF, 0, 1, 2, 9, 33, 34, 35, 64, 100, 101, 150, 181, 190, 250, 333, 400, 401,
    402, 500, 613, 631, 700, 800, 1023, 1024, 1200, 1500, 1777, 2000, 2039))


def rxe_counter(vm, name):
    _, out = vm.run("rdma statistic show link rxe0/1")
    m = re.search(rf"\b{name} (\d+)", out)
    return int(m.group(1)) if m else -1


def check_drops(c, label, res):
    sjson = res[3] or {}
    for fl in sjson.get("flows", []):
        c.expect(fl["dropped_on_purpose"] > 0 and fl["seq_naks"] > 0 and fl["retx_pkts"] > 0,
                 f"{label} qp {fl['qpn']}: {fl['dropped_on_purpose']} packets dropped on purpose,"
                 f" {fl['seq_naks']} sequence NAKs, {fl['retx_pkts']} retransmitted", str(fl))


def main():
    fevm.setup()
    exe = fevm.feroce_bin()
    t0 = time.monotonic()
    c = fevm.Checks()
    with fevm.Vm(fevm.workdir("drop")) as vm:
        oos0 = rxe_counter(vm, "out_of_seq_request")
        # MTU 4096: each QP's stream starts at PSN 0xfffff8 and loses the same 32 PSNs.
        sizes, counts, imms = [1, 8192, 65536, 1 << 20], [200, 100, 40, 8], [1, 1, 1, 1]
        res = fevm.run_pair(
            vm, exe, fevm.SEND_PACED + ["--mtu", "4096", "--imm-every", "1", "--drop-psn", DROPS],
            ["--qps", "4", "--mtu", "4096", "--psn", "0xfffff8", "--slots", str(fevm.SLOTS),
             "--size", ",".join(map(str, sizes)), "--count", ",".join(map(str, counts)),
             "--imm-every", ",".join(map(str, imms))])
        fevm.check_run(c, "MTU 4096 with drops", res, sizes, counts, imms)
        check_drops(c, "MTU 4096 with drops", res)
        # MTU 1024, doorbells every 4th message (plain WRITEs lost in between too).
        sizes, counts, imms = [5000, 1 << 20], [80, 4], [4, 4]
        res = fevm.run_pair(
            vm, exe, fevm.SEND_PACED + ["--mtu", "1024", "--imm-every", "4", "--drop-psn", DROPS],
            ["--qps", "2", "--mtu", "1024", "--psn", "0xffffc0", "--slots", str(fevm.SLOTS),
             "--size", ",".join(map(str, sizes)), "--count", ",".join(map(str, counts)),
             "--imm-every", ",".join(map(str, imms))])
        fevm.check_run(c, "MTU 1024 with drops", res, sizes, counts, imms)
        check_drops(c, "MTU 1024 with drops", res)
        # Every 23rd packet, resends included.
        sizes, counts, imms = [65536], [40], [1]
        res = fevm.run_pair(
            vm, exe, fevm.SEND_PACED + ["--mtu", "4096", "--imm-every", "1", "--drop-every", "23"],
            ["--qps", "1", "--mtu", "4096", "--slots", str(fevm.SLOTS),
             "--size", ",".join(map(str, sizes)), "--count", ",".join(map(str, counts)),
             "--imm-every", ",".join(map(str, imms))])
        fevm.check_run(c, "every 23rd packet dropped", res, sizes, counts, imms)
        check_drops(c, "every 23rd packet dropped", res)
        oos = rxe_counter(vm, "out_of_seq_request")
        c.expect(oos > oos0 >= 0, f"rxe counted {oos - oos0} out-of-sequence requests")
    c.finish("interop drop", t0)


if __name__ == "__main__":
    main()
