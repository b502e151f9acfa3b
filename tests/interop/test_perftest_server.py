#!/usr/bin/python3
"""`feroce recv --perftest-server` as an ib_write_bw server: Debian's perftest ib_write_bw client
on rxe in the VM runs perftest's TCP exchange with feroce (versions, page size, MTU, QP keys,
sync points, its report, "done"), then writes into feroce's receiver through rxe and raw
Ethernet. The client must exit 0 and print its result; feroce must have placed every byte the
client reports."""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fevm  # noqa: E402


def run(c, vm, exe, label, size, iters, mtu):
    cmd = [exe, "recv", "--backend", "raw", "--if", fevm.TAP, "--bind", fevm.FE_IP, "--mac",
           fevm.FE_MAC, "--perftest-server", "--perftest-listen", fevm.HOST_IP,
           "--msg-size", str(size), "--mtu", str(mtu), "--timeout", "120s", "--interval", "0"]
    fevm.log("host: " + " ".join(cmd[1:]))
    srv = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = srv.stdout.readline()  # the client may connect only once feroce listens
    fevm.log("host: " + first.strip())
    cli = vm.submit(f"ib_write_bw -d rxe0 -x 1 -s {size} -n {iters} {fevm.HOST_IP}",
                    "ib_write_bw client")
    crc, cout = cli.wait(150)
    print(cout, flush=True)
    try:
        sout, _ = srv.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, _ = srv.communicate()
    sout = first + sout
    print(sout, flush=True)
    c.expect(crc == 0, f"{label}: ib_write_bw client exit 0", cout)
    c.expect(re.search(rf"^\s*{size}\s+{iters}\s", cout, re.M) is not None,
             f"{label}: the client printed its result ({size} B x {iters})", cout)
    c.expect(srv.returncode == 0, f"{label}: feroce recv --perftest-server exit 0", sout)
    m = re.search(r"(\d+) x (\d+) B reported, (\d+) B placed", sout)
    c.expect(m is not None and int(m.group(1)) == iters and int(m.group(2)) == size
             and int(m.group(3)) >= size * iters,
             f"{label}: every reported byte placed by feroce's responder", sout)


def main():
    fevm.setup()
    exe = fevm.feroce_bin()
    t0 = time.monotonic()
    c = fevm.Checks()
    with fevm.Vm(fevm.workdir("ptserver")) as vm:
        run(c, vm, exe, "64 KiB x 200 at MTU 4096", 65536, 200, 4096)
        run(c, vm, exe, "4 KiB x 1000 at MTU 1024", 4096, 1000, 1024)
    c.finish("interop perftest server", t0)


if __name__ == "__main__":
    main()
