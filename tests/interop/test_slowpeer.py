#!/usr/bin/python3
"""A slow receiver must not end a stream. `feroce send` with its default retransmit timer
(10 ms, backing off to 1 s before timeouts spend retries) and no pacing (100 Gb/s into an
emulated CPU) writes 64 KiB and 1 MiB messages into Soft-RoCE in the VM, whose answers take tens
of ms: every message arrives verified and no QP fails. (Before the backoff these ended "retry
exceeded": 7 timeouts in under 100 ms.) Go-Back-N on sequence NAKs is not slowed by the
backoff: interop_drop checks it with the same defaults."""
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
    with fevm.Vm(fevm.workdir("slowpeer")) as vm:
        sizes, counts, imms = [65536, 1 << 20], [64, 12], [1, 1]
        res = fevm.run_pair(
            vm, exe, ["--slots", str(fevm.SLOTS), "--op", "write-imm", "--mtu", "4096"],
            ["--qps", "2", "--mtu", "4096", "--slots", str(fevm.SLOTS),
             "--size", ",".join(map(str, sizes)), "--count", ",".join(map(str, counts)),
             "--imm-every", ",".join(map(str, imms))], timeout=240)
        fevm.check_run(c, "unpaced, default timers", res, sizes, counts, imms)
        flows = (res[3] or {}).get("flows", [])
        backoffs = sum(f.get("timeout_backoffs", 0) for f in flows)
        timeouts = sum(f.get("timeouts", 0) for f in flows)
        print(f"slow peer: {timeouts} timeouts, {backoffs} of them backed off instead of "
              f"spending a retry", flush=True)
        c.expect(all(not f.get("error") for f in flows) and len(flows) == 2,
                 "no QP failed (no retry exceeded)", res[4])
    c.finish("interop slow peer", t0)


if __name__ == "__main__":
    main()
