#!/usr/bin/python3
"""Boot smoke test of the interop VM: Soft-RoCE comes up on the guest's eth0 with the RoCEv2
GID of its IPv4 address and active MTU 4096, userspace verbs work (an RC ping-pong over rxe
inside the guest), the guest reaches the host's tap address, and the command channel returns
output and exit codes faithfully."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fevm  # noqa: E402


def expect(cond, what, detail=""):
    if not cond:
        print(f"FAIL: {what}\n{detail}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def main():
    fevm.setup()
    t0 = time.monotonic()
    with fevm.Vm(fevm.workdir("boot")) as vm:
        rc, out = vm.run("echo hello; echo oops >&2; exit 3", check=False)
        expect(rc == 3 and "hello" in out and "oops" in out, "command channel: output and exit code",
               out)
        _, out = vm.run("ibv_devinfo -d rxe0 -v")
        expect("PORT_ACTIVE" in out, "rxe0 port 1 ACTIVE", out)
        expect("active_mtu:\t\t4096" in out, "active MTU 4096 (netdev MTU 9000)", out)
        # GID index 1 is the IPv4-mapped address; its type must be RoCE v2.
        _, out = vm.run("cat /sys/class/infiniband/rxe0/ports/1/gids/1 "
                        "/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1")
        expect(f"0000:0000:0000:0000:0000:ffff:0a4d:0002" in out and "RoCE v2" in out,
               "GID 1 = ::ffff:10.77.0.2, RoCE v2", out)
        _, out = vm.run(f"ping -c 1 -W 5 {fevm.HOST_IP}")
        expect(" 0% packet loss" in out, "guest reaches the host's tap address", out)
        srv = vm.submit("ibv_rc_pingpong -d rxe0 -g 1 -n 20 -s 4096", "pingpong server")
        # The client gives up at once when the server is not listening yet: try again.
        for _ in range(20):
            time.sleep(0.5)
            rc, out = vm.run(f"ibv_rc_pingpong -d rxe0 -g 1 -n 20 -s 4096 {fevm.GUEST_IP}",
                             timeout=60, check=False)
            if "Couldn't connect" not in out:
                break
        src, sout = srv.wait(30)
        expect(rc == 0 and src == 0 and "iters in" in out,
               "ibv_rc_pingpong over rxe in the guest", out + sout)
        print(f"boot: rxe ready {vm.boot_s:.1f} s after QEMU start (guest uptime "
              f"{vm.guest_uptime_s:.1f} s)", flush=True)
    print(f"interop boot smoke test: passed in {time.monotonic() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
