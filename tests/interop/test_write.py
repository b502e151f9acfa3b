#!/usr/bin/python3
"""`feroce send` (raw Ethernet, in the test's network namespace) streams RDMA WRITE and WRITE with
immediate into `feroce verbs-recv` on Linux Soft-RoCE (rdma_rxe) in the VM: messages of 1 B to
1 MiB, path MTU 4096 and 1024, first PSN just below 2^24 so that every stream wraps the PSN
space, several QPs at once and two front-ends, doorbells on every message or every 4th,
plain-WRITE streams, and ring slots few enough that rxe's RNR NAKs hold the sender back. The guest verifies every byte
and every immediate in order, and each QP must still be RTS at the end."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fevm  # noqa: E402


def check_record(c, path, res, sizes, counts):
    """Every message of every flow, in order, with the data the pattern says."""
    flows = fevm.parse_flows(res[1])
    try:
        recs = fevm.read_record(path)
    except (OSError, ValueError) as e:
        c.expect(False, f"record file readable: {e}")
        return
    by_flow = {}
    for flow, stream, size, k, data in recs:
        by_flow.setdefault(flow, []).append((stream, size, k, data))
    for i, (size, count) in enumerate(zip(sizes, counts)):
        got = by_flow.get(i, [])
        stream = int(flows.get(i, {}).get("fe_qpn", -1))
        ok = (len(got) == count and all(g[0] == stream and g[1] == size and g[2] == k
                                        for k, g in enumerate(got)))
        bad = [g[2] for g in got if g[3] != fevm.pattern_bytes(stream, g[2], size)]
        c.expect(ok and not bad, f"record: flow {i} has messages 0..{count - 1} of stream "
                 f"{stream}, {size} B each, data as the pattern says",
                 f"{len(got)} records, first bad messages {bad[:5]}")


def main():
    fevm.setup()
    exe = fevm.feroce_bin()
    t0 = time.monotonic()
    c = fevm.Checks()
    with fevm.Vm(fevm.workdir("write")) as vm:
        # MTU 4096: 1 B to 1 MiB on four QPs; the last stream is plain WRITEs (no immediate).
        # The receiver is pinned (--cpu 0) and records every message to the shared folder.
        sizes, counts, imms = [1, 4097, 65536, 1 << 20], [300, 100, 40, 12], [1, 1, 1, 0]
        res = fevm.run_pair(
            vm, exe, fevm.SEND_PACED + ["--mtu", "4096", "--imm-every", "1"],
            ["--qps", "4", "--mtu", "4096", "--psn", "0xfffff0", "--slots", str(fevm.SLOTS),
             "--cpu", "0", "--record", "/shared/record.bin",
             "--size", ",".join(map(str, sizes)), "--count", ",".join(map(str, counts)),
             "--imm-every", ",".join(map(str, imms))])
        fevm.check_run(c, "MTU 4096", res, sizes, counts, imms)
        check_record(c, os.path.join(vm.share, "record.bin"), res, sizes, counts)
        # MTU 1024: a 1 MiB message is 1024 packets and wraps the PSN space inside itself;
        # doorbells on every 4th message (the others are plain WRITEs placed before them); the
        # detector-frames pattern (1 B messages fall back to the counter), busy-polling receiver.
        sizes, counts, imms = [3000, 1 << 20, 1], [64, 6, 101], [4, 4, 4]
        res = fevm.run_pair(
            vm, exe, fevm.SEND_PACED + ["--mtu", "1024", "--imm-every", "4", "--pattern", "frames"],
            ["--qps", "3", "--mtu", "1024", "--psn", "0xffff80", "--slots", str(fevm.SLOTS),
             "--pattern", "frames", "--gid-index", "1",
             "--size", ",".join(map(str, sizes)), "--count", ",".join(map(str, counts)),
             "--imm-every", ",".join(map(str, imms))], event=False)
        fevm.check_run(c, "MTU 1024", res, sizes, counts, imms)
        # Two front-ends (two feroce send processes, addresses of their own), two QPs each.
        sizes, counts, imms = [777, 32768, 100000, 2], [50, 20, 10, 64], [1, 1, 1, 1]
        res = fevm.run_pair(
            vm, exe, fevm.SEND_PACED + ["--mtu", "4096", "--imm-every", "1"],
            ["--qps", "2", "--mtu", "4096", "--psn", "0xfffffa", "--slots", str(fevm.SLOTS),
             "--ip", fevm.GUEST_IP,
             "--size", ",".join(map(str, sizes)), "--count", ",".join(map(str, counts)),
             "--imm-every", ",".join(map(str, imms))], fes=2)
        fevm.check_run(c, "two front-ends", res, sizes, counts, imms)
        fl = fevm.parse_flows(res[1])
        c.expect([fl.get(i, {}).get("fe") for i in range(4)] ==
                 ["10.77.0.3", "10.77.0.3", "10.77.0.4", "10.77.0.4"],
                 "two front-ends: flows 0-1 on 10.77.0.3, 2-3 on 10.77.0.4", res[1])
        # The checks can fail: a receiver that expects another ring layout (32 slots where the
        # sender wraps at 16) finds messages 16.. in the wrong slots, and early ones overwritten
        # before it looked (it let the sender run 31 messages ahead), and says so.
        res = fevm.run_pair(
            vm, exe, fevm.SEND_PACED + ["--mtu", "4096", "--imm-every", "1"],
            ["--mtu", "4096", "--slots", "32", "--size", "4096", "--count", "24"])
        flows = fevm.parse_flows(res[1])
        c.expect(res[0] == 1 and "verbs-recv: FAILED" in res[1] and
                 int(flows.get(0, {}).get("data_errors", "0")) >= 8 and
                 re.search(r"message \d+ byte \d+ is 0x[0-9a-f]{2}, expected 0x", res[1]),
                 "a ring layout mismatch is caught (wrong bytes named, exit 1)", res[1])
        # A record that cannot be written (a full disk): every message is still verified, the
        # receiver says what the record misses and fails (it used to end OK, the record short).
        res = fevm.run_pair(
            vm, exe, fevm.SEND_PACED + ["--mtu", "4096", "--imm-every", "1"],
            ["--mtu", "4096", "--slots", str(fevm.SLOTS), "--size", "65536", "--count", "20",
             "--record", "/dev/full"])
        flows = fevm.parse_flows(res[1])
        c.expect(res[0] == 1 and "verbs-recv: FAILED" in res[1] and
                 "recording failed: No space left on device" in res[1] and
                 re.search(r"the record misses at least the last (1\d|20) messages", res[1]) and
                 flows.get(0, {}).get("msgs") == "20" and
                 flows.get(0, {}).get("data_errors") == "0",
                 "a record on a full disk: 20 messages verified, the record's loss said, exit 1",
                 res[1])
        print(f"boot: rxe ready {vm.boot_s:.1f} s after QEMU start", flush=True)
    c.finish("interop write", t0)


if __name__ == "__main__":
    main()
