#!/usr/bin/python3
"""Runs commands in the interop test VM by hand: boots it (building the image on first use) in
a private network namespace, runs each COMMAND in the guest (busy-box sh; `feroce` is the given
build's binary with its libraries), prints output and exit code, and powers it off.

  sudo tests/interop/vm.py [--feroce build/feroce] [--host CMD] 'ibv_devinfo -v' ...

--host CMD runs on the host side (in the namespace, with the tap fetap0 at 10.77.0.1; the
guest is 10.77.0.2) after the guest commands have started, e.g. a `feroce send` front-end;
guest commands then run in the background and are waited for at the end."""
import argparse
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fevm  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--feroce", help="a feroce binary to make available in the guest")
    ap.add_argument("--host", action="append", default=[], help="a host-side command")
    ap.add_argument("--timeout", type=float, default=300, help="per guest command, s")
    ap.add_argument("commands", nargs="*")
    a = ap.parse_args()
    fevm.setup()
    rc = 0
    with fevm.Vm(fevm.workdir("manual")) as vm:
        prefix = ""
        if a.feroce:
            cmd = vm.install_binary(os.path.abspath(a.feroce), "feroce")
            prefix = f"feroce() {{ {cmd} \"$@\"; }}\n"
        jobs = [vm.submit(prefix + c, c) for c in a.commands]
        for h in a.host:
            print(f"== host: {h}", flush=True)
            rc |= subprocess.run(shlex.split(h)).returncode
        for j in jobs:
            r, out = j.wait(a.timeout)
            print(f"== guest: {j.what} (exit {r})\n{out}", flush=True)
            rc |= r
        print(f"(VM work directory: {vm.workdir})")
    sys.exit(1 if rc else 0)


if __name__ == "__main__":
    main()
