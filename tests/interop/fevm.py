"""Host side of the interop test VM: a private network namespace with a tap device, QEMU (TCG,
PVH boot, 1 vCPU) running the image from vmimage.py, and the 9p command channel.

A test script calls `fevm.setup()` first: it re-executes the script inside a fresh network
namespace (`unshare --net`), so that the tap device, its addresses and every packet of the test
live and die with the test process; nothing touches the host's interfaces. Missing
prerequisites (root, /dev/net/tun, QEMU, the package registry on a first run) end the script
with exit code 77, which CTest reports as skipped, and a message saying why."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXIT_SKIP = 77
HOST_IP = "10.77.0.1"
GUEST_IP = "10.77.0.2"
PREFIX = 24
TAP = "fetap0"
GUEST_MAC = "52:54:00:fe:00:02"
MTU = 9000
QEMU = "qemu-system-x86_64"


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def skip(msg):
    print(f"SKIP: {msg}", flush=True)
    sys.exit(EXIT_SKIP)


def sh(cmd):
    subprocess.run(cmd, check=True)


def setup():
    """Checks prerequisites and moves this script into its own network namespace (by
    re-executing it under `unshare --net`). Returns in the namespace, with `lo` up."""
    if os.environ.get("FEROCE_VM_NETNS") == "inner":
        sh(["ip", "link", "set", "lo", "up"])
        return
    if os.geteuid() != 0:
        skip("the interop VM needs root (network namespace, tap device)")
    if not os.path.exists("/dev/net/tun"):
        skip("/dev/net/tun is missing (no tap devices)")
    if not shutil.which(QEMU):
        skip(f"{QEMU} not found (Debian package qemu-system-x86; scripts/deps.sh installs it)")
    if not shutil.which("unshare") or not shutil.which("ip"):
        skip("unshare (util-linux) or ip (iproute2) missing")
    if subprocess.run(["unshare", "--net", "true"]).returncode != 0:
        skip("cannot create a network namespace here (unshare --net failed)")
    # The image is built (or found in the cache) here, before entering the namespace: its
    # Debian packages are downloaded, and the test's namespace has no route to a registry.
    image_dir()
    env = dict(os.environ, FEROCE_VM_NETNS="inner")
    os.execvpe("unshare", ["unshare", "--net", "--", sys.executable] + sys.argv, env)


def image_dir():
    """Builds (or finds in the cache) the VM image; skips the test when it cannot be built."""
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, os.path.join(HERE, "vmimage.py")],
                       stdout=subprocess.PIPE, text=True)
    if p.returncode == EXIT_SKIP:
        skip("the VM image cannot be built here (see vmimage's message above)")
    if p.returncode != 0:
        raise RuntimeError(f"vmimage.py failed with exit code {p.returncode}")
    d = p.stdout.strip().splitlines()[-1]
    dt = time.monotonic() - t0
    log(f"VM image {d} ({'built' if dt > 3 else 'cached'}, {dt:.1f} s)")
    return d


def guest_sonames(image):
    with open(os.path.join(image, "manifest.txt")) as f:
        return {l.split()[1] for l in f if l.startswith("soname ")}


class Cmd:
    """A command running in the guest."""

    def __init__(self, vm, n, what):
        self.vm, self.n, self.what = vm, n, what

    def _path(self, ext):
        return os.path.join(self.vm.cmddir, f"{self.n}.{ext}")

    def done(self):
        return os.path.exists(self._path("rc"))

    def output(self):
        try:
            with open(self._path("out"), errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_for_output(self, text, timeout):
        """Waits until the command's output contains `text` (e.g. a server saying it is
        ready); raises TimeoutError or RuntimeError (the command ended without it)."""
        end = time.monotonic() + timeout
        while text not in self.output():
            if self.done():
                raise RuntimeError(f"guest command {self.n} ({self.what}) ended without "
                                   f"'{text}':\n{self.output()}")
            if time.monotonic() > end:
                raise TimeoutError(f"guest command {self.n} ({self.what}): no '{text}' after "
                                   f"{timeout} s; output so far:\n{self.output()}")
            time.sleep(0.05)

    def wait(self, timeout):
        """(exit code, output); raises TimeoutError (with the output so far) after timeout."""
        end = time.monotonic() + timeout
        while not self.done():
            if time.monotonic() > end:
                raise TimeoutError(f"guest command {self.n} ({self.what}) still running after "
                                   f"{timeout} s; output so far:\n{self.output()}")
            if not self.vm.alive():
                raise RuntimeError(f"the VM died during guest command {self.n} ({self.what}); "
                                   f"console tail:\n{self.vm.console_tail()}")
            time.sleep(0.05)
        with open(self._path("rc")) as f:
            return int(f.read().strip() or "255"), self.output()


class Vm:
    """One guest. Use as a context manager; `workdir` keeps the console log, the shared folder
    and everything the guest wrote, for a post-mortem."""

    def __init__(self, workdir, mem_mb=1024, boot_timeout=120):
        self.workdir = workdir
        self.share = os.path.join(workdir, "share")
        self.cmddir = os.path.join(self.share, "cmd")
        self.console = os.path.join(workdir, "console.log")
        self.mem_mb = mem_mb
        self.boot_timeout = boot_timeout
        self.proc = None
        self.qemu_log = None
        self.n = 0
        self.udp4791 = None
        self.boot_s = None

    # -- lifetime
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        image = image_dir()
        self.sonames = guest_sonames(image)
        if os.path.exists(self.share):
            shutil.rmtree(self.share)
        os.makedirs(self.share)
        sh(["ip", "tuntap", "add", "dev", TAP, "mode", "tap"])
        sh(["ip", "link", "set", TAP, "mtu", str(MTU), "up"])
        sh(["ip", "addr", "add", f"{HOST_IP}/{PREFIX}", "dev", TAP])
        # Without a socket on UDP 4791 the host kernel answers rxe's ACKs with ICMP port
        # unreachable; tools that use raw sockets see the packets anyway.
        self.udp4791 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp4791.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.udp4791.bind((HOST_IP, 4791))
        accel = os.environ.get("FEROCE_VM_ACCEL", "tcg")
        cpu = os.environ.get("FEROCE_VM_CPU", "max")
        cmd = [QEMU, "-accel", accel, "-M", "pc", "-cpu", cpu, "-smp", "1",
               "-m", str(self.mem_mb), "-nodefaults", "-no-user-config", "-display", "none",
               "-no-reboot",
               "-kernel", os.path.join(image, "vmlinux"),
               "-initrd", os.path.join(image, "initramfs.cpio"),
               "-append", f"console=ttyS0 panic=-1 fe.ip={GUEST_IP}/{PREFIX} fe.mtu={MTU}",
               "-serial", f"file:{self.console}",
               "-netdev", f"tap,id=n0,ifname={TAP},script=no,downscript=no",
               "-device", f"virtio-net-pci,netdev=n0,mac={GUEST_MAC}",
               "-fsdev", f"local,id=fs0,path={self.share},security_model=none",
               "-device", "virtio-9p-pci,fsdev=fs0,mount_tag=fe"]
        t0 = time.monotonic()
        self.qemu_log = open(os.path.join(self.workdir, "qemu.log"), "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.qemu_log,
                                     stderr=subprocess.STDOUT)
        ready = os.path.join(self.share, "ready")
        failed = os.path.join(self.share, "init-failed")
        while not os.path.exists(ready):
            if os.path.exists(failed) or not self.alive() or \
                    time.monotonic() - t0 > self.boot_timeout:
                why = "init failed" if os.path.exists(failed) else \
                    "QEMU exited" if not self.alive() else f"no 'rxe ready' in {self.boot_timeout} s"
                self.stop()
                with open(os.path.join(self.workdir, "qemu.log")) as f:
                    qlog = f.read()
                raise RuntimeError(f"VM boot failed: {why}\nqemu: {qlog}\nconsole tail:\n"
                                   f"{self.console_tail()}")
            time.sleep(0.05)
        self.boot_s = time.monotonic() - t0
        with open(ready) as f:
            self.guest_uptime_s = float(f.read().strip())
        log(f"VM up: rxe ready {self.boot_s:.1f} s after QEMU start "
            f"(guest uptime {self.guest_uptime_s:.1f} s, accel {accel})")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.proc is None:
            subprocess.run(["ip", "link", "del", TAP], stderr=subprocess.DEVNULL)
            return
        if self.alive():
            try:
                self.submit("poweroff -f", "poweroff")
                self.proc.wait(timeout=15)
            except (subprocess.TimeoutExpired, OSError):
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self.proc = None
        if self.qemu_log:
            self.qemu_log.close()
            self.qemu_log = None
        if self.udp4791:
            self.udp4791.close()
            self.udp4791 = None
        subprocess.run(["ip", "link", "del", TAP], stderr=subprocess.DEVNULL)

    def console_tail(self, lines=40):
        try:
            with open(self.console, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except FileNotFoundError:
            return "(no console log)"

    # -- commands
    def submit(self, script, what=None):
        """Starts a shell script (busybox sh) in the guest; returns a Cmd."""
        self.n += 1
        tmp = os.path.join(self.cmddir, f"{self.n}.tmp")
        with open(tmp, "w") as f:
            f.write("export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/bbin\n" + script + "\n")
        os.rename(tmp, os.path.join(self.cmddir, f"{self.n}.sh"))
        return Cmd(self, self.n, what or script.splitlines()[0][:60])

    def run(self, script, timeout=60, check=True):
        rc, out = self.submit(script).wait(timeout)
        if check and rc != 0:
            raise RuntimeError(f"guest command failed (exit {rc}): {script}\n{out}")
        return rc, out

    # -- files
    def install_binary(self, path, name=None):
        """Copies a host binary into the shared folder with the part of its library closure
        that the guest image lacks (the guest is Debian 12 too); returns the guest command."""
        name = name or os.path.basename(path)
        bindir = os.path.join(self.share, "bin")
        libdir = os.path.join(self.share, "lib")
        os.makedirs(bindir, exist_ok=True)
        os.makedirs(libdir, exist_ok=True)
        shutil.copy2(path, os.path.join(bindir, name))
        out = subprocess.run(["ldd", path], check=True, stdout=subprocess.PIPE, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "=>" and parts[2].startswith("/"):
                if parts[0] not in self.sonames:
                    shutil.copy2(parts[2], os.path.join(libdir, parts[0]))
        return f"LD_LIBRARY_PATH=/shared/lib /shared/bin/{name}"


def workdir(name):
    """A fresh directory for one test's VM: under $FEROCE_INTEROP_DIR, or in /tmp."""
    base = os.environ.get("FEROCE_INTEROP_DIR")
    if base:
        d = os.path.join(base, name)
        if os.path.exists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        return d
    return tempfile.mkdtemp(prefix=f"feroce-{name}-")


# ---- feroce tools on both sides ----
# The software front-end (`feroce send`, raw Ethernet backend) has an address of its own on the
# tap's subnet and a locally administered MAC: it answers ARP for it itself, as an FPGA board
# does, and the host kernel never sees its traffic as local.
FE_IP = "10.77.0.3"
FE_MAC = "02:fe:00:00:00:03"


SLOTS = 16  # ring slots per flow: few, so that rxe's RNR NAKs hold the sender back
# The firmware's 1 ms ACK timeout is far below how fast rxe answers under TCG emulation (tens of
# ms with the guest busy verifying, more when the machine is loaded): spurious timeouts resend
# the whole window, which slows rxe further, until the retries run out. 500 ms is IB timeout
# code 17; real losses are recovered by rxe's sequence NAKs long before. The pacing keeps the
# emulated NIC's queues from overflowing (a sender without congestion control at 100 Gb/s into
# a software receiver is a congestion collapse, not an interoperability test).
SEND_PACED = ["--slots", str(SLOTS), "--ack-timeout", "500ms", "--op", "write-imm",
              "--line-rate", "50Mbps", "--replay", "256K"]


def feroce_bin():
    """The feroce executable under test (argv[1] from CTest), checked for the subcommands the
    interop tests need; skips with a message when they are not built."""
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        skip("usage: test_X.py FEROCE_BIN (ctest passes the build's feroce)")
    exe = os.path.abspath(sys.argv[1])
    out = subprocess.run([exe, "help"], stdout=subprocess.PIPE, text=True).stdout
    cmds = {l.split()[0] for l in out.splitlines() if l.startswith("  ") and l.split()}
    for need, why in (("send", "feroce send (src/tools/cmd_send.c) is not in this build"),
                      ("verbs-recv", "feroce verbs-recv needs libibverbs-dev at build time")):
        if need not in cmds:
            skip(why)
    return exe


def fe_addr(i):
    """IPv4 and MAC of software front-end i (0 = FE_IP / FE_MAC)."""
    return f"10.77.0.{3 + i}", f"02:fe:00:00:00:{3 + i:02x}"


def run_pair(vm, exe, send_args, recv_args, timeout=120, event=True, fes=1):
    """Runs `fes` instances of `feroce send` (raw backend on the tap, in this namespace, each
    with its own address) as front-ends and `feroce verbs-recv` on rxe in the guest as the host
    of all of them; returns (recv_rc, recv_out, send_rc, send_json or None, send_text), the
    senders' results merged (flows of all, ok when all are). event=False: verbs-recv busy-polls
    its CQ."""
    import json
    guest = vm.install_binary(exe)
    senders = []
    try:
        for i in range(fes):
            ip, mac = fe_addr(i)
            cmd = [exe, "send", "--backend", "raw", "--if", TAP, "--bind", ip, "--mac", mac,
                   "--once", "--json", "--interval", "0"] + send_args
            log("host: " + " ".join(cmd[1:]))
            senders.append(subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT, text=True))
        time.sleep(0.3)  # the front-ends' sockets are up before the host opens QPs
        fe_opts = " ".join(f"--fe {fe_addr(i)[0]}" for i in range(fes))
        rcmd = (f"{guest} verbs-recv {fe_opts} {'--event ' if event else ''}--interval 0 " +
                " ".join(recv_args))
        log("guest: " + rcmd.split("/shared/bin/")[-1])
        t0 = time.monotonic()
        rrc, rout = vm.submit(rcmd).wait(timeout)
        log(f"guest: verbs-recv exited {rrc} after {time.monotonic() - t0:.1f} s")
        outs = []
        for snd in senders:
            try:
                outs.append(snd.communicate(timeout=20)[0])
            except subprocess.TimeoutExpired:
                snd.kill()
                outs.append(snd.communicate()[0])
    finally:
        for snd in senders:
            if snd.poll() is None:
                snd.kill()
                snd.wait()
    merged = {"flows": [], "ok": True}
    for sout in outs:
        sjson = None
        for line in sout.splitlines():
            if line.startswith("{") and '"tool":"send"' in line.replace(" ", ""):
                try:
                    sjson = json.loads(line)
                except ValueError:
                    pass
        if sjson is None:
            merged = None
            break
        merged["flows"] += sjson.get("flows", [])
        merged["ok"] = merged["ok"] and bool(sjson.get("ok"))
    src = max((snd.returncode for snd in senders), default=1)
    return rrc, rout, src, merged, "\n".join(outs)


def parse_flows(recv_out):
    """verbs-recv's final per-flow lines as dicts of key=value."""
    flows = {}
    for line in recv_out.splitlines():
        if line.startswith("flow ") and " fe=" in line:
            idx = int(line.split()[1].rstrip(":"))
            kv = dict(t.split("=", 1) for t in line.split() if "=" in t)
            kv["incomplete"] = "INCOMPLETE" in line
            flows[idx] = kv
    return flows


class Checks:
    """Collects pass/fail lines; exit code 1 at the end when anything failed."""

    def __init__(self):
        self.failed = 0

    def expect(self, cond, what, detail=""):
        if cond:
            print(f"ok: {what}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL: {what}\n{detail}", flush=True)
        return cond

    def finish(self, name, t0):
        dt = time.monotonic() - t0
        if self.failed:
            print(f"{name}: {self.failed} check(s) FAILED ({dt:.1f} s)", flush=True)
            sys.exit(1)
        print(f"{name}: passed in {dt:.1f} s", flush=True)


def doorbells(count, m):
    if m == 0:
        return 0
    return sum(1 for k in range(count) if (k + 1) % m == 0 or k + 1 == count)


def check_run(c, label, res, sizes, counts, imms):
    rrc, rout, src, sjson, sout = res
    print(rout, flush=True)
    c.expect(rrc == 0 and "verbs-recv: OK" in rout, f"{label}: verbs-recv verified everything")
    flows = parse_flows(rout)
    c.expect(len(flows) == len(sizes), f"{label}: {len(sizes)} flows reported", rout)
    for i, (size, count, m) in enumerate(zip(sizes, counts, imms)):
        f = flows.get(i, {})
        tag = f"{label} flow {i} ({size} B x {count}, doorbell every {m})"
        c.expect(f.get("size") == str(size) and f.get("msgs") == str(count) and
                 f.get("bytes") == str(size * count) and not f.get("incomplete"),
                 f"{tag}: all messages, every byte verified", str(f))
        c.expect(f.get("data_errors") == "0" and f.get("len_errors") == "0" and
                 f.get("cqe_errors") == "0", f"{tag}: no data, length or completion error", str(f))
        c.expect(f.get("doorbells") == str(doorbells(count, m)) and
                 f.get("imm_out_of_order") == "0",
                 f"{tag}: {doorbells(count, m)} immediates, all in order", str(f))
        c.expect(f.get("qp_state") == "RTS", f"{tag}: QP still RTS", str(f))
    c.expect(src == 0 and sjson is not None and sjson.get("ok"), f"{label}: feroce send ok",
             sout[-3000:])
    if sjson:
        got = sorted(fl["msgs"] for fl in sjson.get("flows", []))
        c.expect(got == sorted(counts), f"{label}: the sender completed every message", sout)
        for fl in sjson.get("flows", []):
            print(f"  sender qp {fl['qpn']}: {fl['msgs']} msgs, {fl['tx_pkts']} packets, "
                  f"{fl['retx_pkts']} retransmitted ({fl['rnr_naks']} RNR NAKs, "
                  f"{fl['seq_naks']} sequence NAKs, {fl['timeouts']} timeouts), "
                  f"{fl['gbps']:.3f} Gb/s", flush=True)


def pattern_bytes(stream, k, size):
    """The counter pattern of include/feroce/pattern.h, written again from its definition (an
    independent check of the C implementation on both ends)."""
    import struct
    key = ((stream + 1) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    hi = (k & 0xFFFFFFFF) << 32
    nw = (size + 7) // 8
    words = [(hi | (j & 0xFFFFFFFF)) ^ key for j in range(nw)]
    return struct.pack(f"<{nw}Q", *words)[:size]


def read_record(path):
    """verbs-recv --record: [(flow, stream, size, k, data)]; raises ValueError when malformed."""
    import struct
    out = []
    with open(path, "rb") as f:
        buf = f.read()
    pos = 0
    while pos < len(buf):
        if len(buf) - pos < 32:
            raise ValueError(f"truncated header at {pos}")
        magic, flow, stream, size, k, _t = struct.unpack_from("<IIIIQQ", buf, pos)
        if magic != 0x4D524546:
            raise ValueError(f"bad magic {magic:#x} at {pos}")
        pos += 32
        if len(buf) - pos < size:
            raise ValueError(f"truncated data at {pos}")
        out.append((flow, stream, size, k, buf[pos:pos + size]))
        pos += size
    return out
