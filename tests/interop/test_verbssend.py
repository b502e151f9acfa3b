#!/usr/bin/python3
"""The other direction: Linux Soft-RoCE as the requester. `feroce verbs-send` in the VM plays
the front-end on rxe (the side channel as the firmware answers it, WRITEs posted through
libibverbs, so rxe's own requester does the PSNs, retransmissions and RNR retries), and
`feroce recv` on the host (raw Ethernet, feroce's responder) is the DAQ receiver: every message
arrives once and verified, PSNs wrap, and a consumer throttled below the offered rate makes
feroce answer RNR NAKs that rxe obeys without losing anything."""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fevm  # noqa: E402


def rxe_counter(vm, name):
    _, out = vm.run("rdma statistic show link rxe0/1")
    m = re.search(rf"\b{name} (\d+)", out)
    return int(m.group(1)) if m else -1


def run(c, vm, exe, label, guest_args, host_args, qps, count, size):
    guest = vm.install_binary(exe)
    snd = vm.submit(f"{guest} verbs-send --once --timeout 60s " + " ".join(guest_args),
                    "verbs-send")
    snd.wait_for_output("waiting for a host", 60)  # its side channel socket is up
    cmd = [exe, "recv", "--backend", "raw", "--if", fevm.TAP, "--bind", fevm.FE_IP, "--mac",
           fevm.FE_MAC, "--fe", f"{fevm.GUEST_IP},qps={qps}", "--count", str(count),
           "--msg-size", str(size), "--interval", "0", "--timeout", "60s", "--json"] + host_args
    fevm.log("host: " + " ".join(cmd[1:]))
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    fevm.log(f"host: feroce recv exited {p.returncode} after {time.monotonic() - t0:.1f} s")
    print(p.stdout, flush=True)
    try:
        src, sout = snd.wait(90)
    except TimeoutError as e:
        src, sout = -1, str(e)
    print(sout, flush=True)
    r = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            try:
                r = json.loads(line)
            except ValueError:
                pass
    c.expect(p.returncode == 0 and r is not None and r.get("ok"), f"{label}: feroce recv ok",
             p.stdout)
    flows = (r or {}).get("flows", [])
    c.expect(len(flows) == qps and all(f["msgs"] == count and f["bytes"] == count * size and
                                       f["verify_errors"] == 0 and f["seq_errors"] == 0 and
                                       not f["qp_error"] for f in flows),
             f"{label}: {qps} QPs x {count} messages of {size} B, each once, verified", p.stdout)
    done = re.findall(r"^qp \d+ -> \d+: (\d+) messages, \d+ bytes, [\d.]+ Gb/s, done$", sout,
                      re.M)
    c.expect(src == 0 and len(done) == qps and all(int(d) == count for d in done),
             f"{label}: verbs-send saw every WRITE complete on rxe", sout)
    return flows


def main():
    fevm.setup()
    exe = fevm.feroce_bin()
    out = subprocess.run([exe, "help"], stdout=subprocess.PIPE, text=True).stdout
    if "verbs-send" not in out:
        fevm.skip("feroce verbs-send needs libibverbs-dev at build time")
    t0 = time.monotonic()
    c = fevm.Checks()
    with fevm.Vm(fevm.workdir("verbssend")) as vm:
        # MTU 4096, two QPs, detector frames, PSNs from 0xfffff0 across the wrap.
        run(c, vm, exe, "MTU 4096", ["--mtu", "4096", "--pattern", "frames"],
            ["--mtu", "4096", "--psn", "0xfffff0"], 2, 150, 65537)
        # MTU 1024, 128 KiB messages into 2 slots with the consumer at 2 Mb/s, ten times
        # below what rxe sends even on a loaded machine: feroce's responder answers RNR NAKs,
        # rxe waits and retries, nothing is lost.
        rnr0 = rxe_counter(vm, "rcvd_rnr_err")
        flows = run(c, vm, exe, "MTU 1024, slow consumer",
                    ["--mtu", "1024", "--slots", "2", "--window", "4"],
                    ["--mtu", "1024", "--psn", "0xffff00", "--slots", "2", "--consume-rate",
                     "2Mbps"], 1, 12, 128 << 10)
        rnr = rxe_counter(vm, "rcvd_rnr_err")
        sent = sum(f.get("rnr_naks", 0) for f in flows)
        c.expect(sent > 0 and rnr > rnr0 >= 0,
                 f"backpressure: feroce sent {sent} RNR NAKs, rxe counted {rnr - rnr0}")
    c.finish("interop verbs-send", t0)


if __name__ == "__main__":
    main()
