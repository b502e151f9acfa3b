#!/usr/bin/python3
"""`feroce send` (raw Ethernet, in the test's network namespace) streams RDMA WRITE and WRITE with
immediate into `feroce verbs-recv` on Linux Soft-RoCE (rdma_rxe) in the VM: messages of 1 B to
1 MiB, path MTU 4096 and 1024, first PSN just below 2^24 so that every stream wraps the PSN
space, several QPs at once, doorbells on every message or every 4th, plain-WRITE streams, and
ring slots few enough that rxe's RNR NAKs hold the sender back. The guest verifies every byte
and every immediate in order, and each QP must still be RTS at the end."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fevm  # noqa: E402


def main():
    fevm.setup()
    exe = fevm.feroce_bin()
    t0 = time.monotonic()
    c = fevm.Checks()
    with fevm.Vm(fevm.workdir("write")) as vm:
        # MTU 4096: 1 B to 1 MiB on four QPs; the last stream is plain WRITEs (no immediate).
        sizes, counts, imms = [1, 4097, 65536, 1 << 20], [300, 100, 40, 12], [1, 1, 1, 0]
        res = fevm.run_pair(
            vm, exe, fevm.SEND_PACED + ["--mtu", "4096", "--imm-every", "1"],
            ["--qps", "4", "--mtu", "4096", "--psn", "0xfffff0", "--slots", str(fevm.SLOTS),
             "--size", ",".join(map(str, sizes)), "--count", ",".join(map(str, counts)),
             "--imm-every", ",".join(map(str, imms))])
        fevm.check_run(c, "MTU 4096", res, sizes, counts, imms)
        # MTU 1024: a 1 MiB message is 1024 packets and wraps the PSN space inside itself;
        # doorbells on every 4th message (the others are plain WRITEs placed before them).
        sizes, counts, imms = [3000, 1 << 20, 1], [64, 6, 101], [4, 4, 4]
        res = fevm.run_pair(
            vm, exe, fevm.SEND_PACED + ["--mtu", "1024", "--imm-every", "4"],
            ["--qps", "3", "--mtu", "1024", "--psn", "0xffff80", "--slots", str(fevm.SLOTS),
             "--size", ",".join(map(str, sizes)), "--count", ",".join(map(str, counts)),
             "--imm-every", ",".join(map(str, imms))])
        fevm.check_run(c, "MTU 1024", res, sizes, counts, imms)
        print(f"boot: rxe ready {vm.boot_s:.1f} s after QEMU start", flush=True)
    c.finish("interop write", t0)


if __name__ == "__main__":
    main()
