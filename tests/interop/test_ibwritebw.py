#!/usr/bin/python3
"""`feroce send --perftest` as an ib_write_bw client: perftest's TCP exchange (versions, page
size, MTU, QP keys, sync points, the report, "done") with the real ib_write_bw server of
Debian's perftest on rxe in the VM, then RDMA WRITEs through feroce's transport and raw
Ethernet. The server must exit 0 and print our report; our side must have every WRITE
acknowledged. The second run has the server at MTU 1024 while we offer 4096: both must settle
on 1024."""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fevm  # noqa: E402

PACING = ["--ack-timeout", "500ms", "--line-rate", "50Mbps", "--replay", "256K"]


def run(c, vm, exe, label, size, iters, server_mtu, our_mtu, psn):
    server_args = f"-d rxe0 -x 1 -s {size} -n {iters}" + (f" -m {server_mtu}" if server_mtu else "")
    srv = vm.submit(f"ib_write_bw {server_args}", "ib_write_bw server")
    cmd = [exe, "send", "--backend", "raw", "--if", fevm.TAP, "--bind", fevm.FE_IP, "--mac",
           fevm.FE_MAC, "--interval", "0", "--perftest", fevm.GUEST_IP, "--msg-size", str(size),
           "--count", str(iters), "--mtu", str(our_mtu), "--peer-psn", psn] + PACING
    fevm.log("host: " + " ".join(cmd[1:]))
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=180)
    fevm.log(f"host: feroce send exited {p.returncode} after {time.monotonic() - t0:.1f} s")
    print(p.stdout, flush=True)
    src, sout = srv.wait(60)
    print(sout, flush=True)
    want_mtu = min(server_mtu or 4096, our_mtu)
    c.expect(p.returncode == 0, f"{label}: feroce send --perftest exit 0", p.stdout)
    m = re.search(r"^qp \d+ -> \d+: (\d+) messages.*$", p.stdout, re.M)
    c.expect(m is not None and int(m.group(1)) == iters and "FAILED" not in m.group(0),
             f"{label}: all {iters} WRITEs of {size} B acknowledged by rxe", p.stdout)
    c.expect(re.search(rf"perftest: {iters} x {size} B .*MTU {want_mtu}\)", p.stdout) is not None,
             f"{label}: exchange completed at MTU {want_mtu}", p.stdout)
    c.expect(src == 0, f"{label}: ib_write_bw server exit 0", sout)
    c.expect(re.search(rf"^\s*{size}\s+{iters}\s", sout, re.M) is not None,
             f"{label}: the server printed our report ({size} B x {iters})", sout)
    c.expect(f"Mtu             : {want_mtu}[B]" in sout, f"{label}: the server used MTU {want_mtu}",
             sout)


def main():
    fevm.setup()
    exe = fevm.feroce_bin()
    t0 = time.monotonic()
    c = fevm.Checks()
    with fevm.Vm(fevm.workdir("ibwritebw")) as vm:
        run(c, vm, exe, "64 KiB at MTU 4096", 65536, 200, 0, 4096, "0xffff00")
        run(c, vm, exe, "1 MiB, server at MTU 1024", 1 << 20, 8, 1024, 4096, "0xfffff0")
    c.finish("interop ib_write_bw", t0)


if __name__ == "__main__":
    main()
