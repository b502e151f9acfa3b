#!/usr/bin/python3
"""Builds the throw-away interop test VM from Debian packages.

Output (in a cache directory, never in the source tree): an uncompressed `vmlinux` that QEMU
boots through its PVH entry, and an uncompressed newc `initramfs.cpio` holding busybox, the
RDMA userspace (libibverbs + the rxe provider, ibverbs-utils, perftest), iproute2 (`ip`,
`rdma`), their library closure, the handful of kernel modules the tests need, and the guest's
/init (guest_init.sh).

Everything comes from `apt-get download` of the packages of the distribution this host runs
(Debian 12): no other download, no root file system image, no package installation. The image
is keyed by a hash of this file and guest_init.sh, so a rebuild happens only when one of them
changes (or with --force, which also picks up newer package versions; manifest.txt in the image
lists the versions it was built from). Concurrent builders (parallel ctest, other worktrees)
serialise on a lock file.

Usage: vmimage.py [--cache DIR] [--force]   -> prints the image directory on stdout.
Exit 77 when the image cannot be built here (no apt-get, no registry): callers skip."""

import argparse
import fcntl
import hashlib
import io
import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

# Userspace packages the guest needs; their Depends/Pre-Depends are followed through library
# packages only (lib*, and the few named otherwise), which is the library closure; the NEEDED
# check below proves it complete.
ROOT_PKGS = ["busybox-static", "libc6", "libibverbs1", "ibverbs-providers", "ibverbs-utils",
             "perftest", "iproute2"]
KERNEL_META = "linux-image-amd64"
# Modules loaded at boot, in this order, each after its dependencies. crc32_generic first:
# rdma_rxe asks the crypto API for "crc32" and nothing autoloads it in an initramfs.
BOOT_MODULES = ["crc32_generic", "virtio_pci", "virtio_net", "9pnet_virtio", "9p",
                "ib_uverbs", "rdma_rxe"]
# Parts of the packages worth shipping; docs, man pages and locales are dropped.
KEEP_PREFIXES = ("bin/", "sbin/", "lib/", "lib64/", "usr/bin/", "usr/sbin/", "usr/lib/",
                 "usr/lib64/", "etc/")
SKIP_PARTS = ("/gconv/", "/perl", "/python", "/x86_64-linux-gnu/tc/")  # tc/: qdisc plugins
LIB_PKGS_NOT_NAMED_LIB = ("zlib1g",)
EXIT_SKIP = 77


def log(msg):
    print(f"vmimage: {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, **kw).stdout


# ---------------------------------------------------------------- package resolution
def parse_deps(field):
    """First alternative of each Depends entry, without version or arch qualifiers."""
    out = []
    for entry in field.split(","):
        name = entry.split("|")[0].strip().split(" ")[0].split(":")[0]
        if name:
            out.append(name)
    return out


def apt_show(pkgs):
    """{name: (version, [deps])} for the candidate version of each package."""
    text = run(["apt-cache", "show", "--no-all-versions"] + sorted(pkgs))
    info = {}
    for para in text.split("\n\n"):
        fields = {}
        for line in para.splitlines():
            m = re.match(r"^([A-Za-z-]+): (.*)$", line)
            if m:
                fields[m.group(1)] = m.group(2)
        if "Package" in fields:
            deps = parse_deps(fields.get("Depends", "")) + parse_deps(fields.get("Pre-Depends", ""))
            info[fields["Package"]] = (fields["Version"], deps)
    missing = set(pkgs) - set(info)
    if missing:
        raise RuntimeError(f"apt-cache knows no candidate for {sorted(missing)}")
    return info


def resolve_closure():
    """Root packages plus every lib* package reachable through Depends/Pre-Depends."""
    seen = {}
    todo = set(ROOT_PKGS)
    while todo:
        info = apt_show(todo)
        seen.update(info)
        todo = set()
        for _, deps in info.values():
            for d in deps:
                if (d.startswith("lib") or d in LIB_PKGS_NOT_NAMED_LIB) and d not in seen:
                    todo.add(d)
    return seen


def resolve_kernel():
    meta = apt_show([KERNEL_META])
    img = meta[KERNEL_META][1][0]
    return img, apt_show([img])[img][0]


def download(pkgs, debdir):
    """apt-get download of pkg=version into debdir, skipping what is already there.
    Returns {name: path}."""
    os.makedirs(debdir, exist_ok=True)

    def find(name, ver):
        # apt-get download writes an epoch's ':' as '%3a'.
        prefixes = {f"{name}_{ver.replace(':', '%3a')}_", f"{name}_{ver.split(':')[-1]}_"}
        for f in os.listdir(debdir):
            if f.endswith(".deb") and any(f.startswith(p) for p in prefixes):
                return os.path.join(debdir, f)
        return None

    want = [f"{n}={v}" for n, v in sorted(pkgs.items()) if not find(n, v)]
    if want:
        log(f"downloading {len(want)} packages into {debdir}")
        # apt drops privileges to _apt for downloads; the cache may not be writable by it.
        subprocess.run(["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root"] + want,
                       check=True, cwd=debdir, stdout=subprocess.DEVNULL)
    paths = {n: find(n, v) for n, v in pkgs.items()}
    lost = [n for n, p in paths.items() if not p]
    if lost:
        raise RuntimeError(f"apt-get download left no .deb for {lost}")
    return paths


# ---------------------------------------------------------------- extraction
def fsys_tar(deb, tmpdir):
    """The deb's data archive as an uncompressed tar file on disk (random access)."""
    path = os.path.join(tmpdir, os.path.basename(deb) + ".tar")
    with open(path, "wb") as f:
        subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], check=True, stdout=f)
    return path


def norm(name):
    return name[2:] if name.startswith("./") else name.lstrip("/")


def extract_userspace(deb, tmpdir, root):
    tpath = fsys_tar(deb, tmpdir)
    with tarfile.open(tpath) as tar:
        for m in tar.getmembers():
            name = norm(m.name)
            if not name.startswith(KEEP_PREFIXES) or any(p in "/" + name for p in SKIP_PARTS):
                continue
            dst = os.path.join(root, name)
            if m.isdir():
                os.makedirs(dst, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst):
                os.unlink(dst)
            if m.issym():
                os.symlink(m.linkname, dst)
            elif m.islnk():
                shutil.copyfile(os.path.join(root, norm(m.linkname)), dst)
                os.chmod(dst, m.mode & 0o7777)
            elif m.isfile():
                with tar.extractfile(m) as src, open(dst, "wb") as out:
                    shutil.copyfileobj(src, out)
                os.chmod(dst, m.mode & 0o7777)
    os.unlink(tpath)


def elf_sections(data):
    """{name: bytes} of a 64-bit little-endian ELF file's sections."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = []
    for i in range(shnum):
        name, _typ, _fl, _addr, off, size = struct.unpack_from("<IIQQQQ", data,
                                                               shoff + i * shentsize)
        hdrs.append((name, off, size))
    _, stroff, strsize = hdrs[shstrndx]
    strtab = data[stroff:stroff + strsize]
    out = {}
    for name, off, size in hdrs:
        end = strtab.index(b"\0", name)
        out[strtab[name:end].decode()] = data[off:off + size]
    return out


def module_deps(data):
    info = elf_sections(data).get(".modinfo", b"")
    for item in info.split(b"\0"):
        if item.startswith(b"depends="):
            return [d for d in item[8:].decode().split(",") if d]
    return []


def extract_kernel(deb, tmpdir, root, outdir):
    """Writes outdir/vmlinux, copies the boot modules (with dependencies) into the initramfs
    tree and returns (kernel release, module load order)."""
    tpath = fsys_tar(deb, tmpdir)
    with tarfile.open(tpath) as tar:
        members = {norm(m.name): m for m in tar.getmembers()}
        vmlinuz = [n for n in members if re.match(r"boot/vmlinuz-", n)]
        if len(vmlinuz) != 1:
            raise RuntimeError(f"expected one boot/vmlinuz-* in {deb}, found {vmlinuz}")
        release = vmlinuz[0][len("boot/vmlinuz-"):]
        with tar.extractfile(members[vmlinuz[0]]) as f:
            vmlinux = extract_vmlinux(f.read())
        with open(os.path.join(outdir, "vmlinux"), "wb") as f:
            f.write(vmlinux)

        mods = {}  # module name (underscores) -> tar member name
        for n in members:
            if n.startswith(f"lib/modules/{release}/") and n.endswith(".ko"):
                mods[os.path.basename(n)[:-3].replace("-", "_")] = n
        order = []
        blobs = {}

        def visit(name, stack):
            name = name.replace("-", "_")
            if name in order:
                return
            if name in stack:
                raise RuntimeError(f"module dependency cycle at {name}")
            if name not in mods:
                raise RuntimeError(f"module {name} is not in {os.path.basename(deb)}")
            with tar.extractfile(members[mods[name]]) as f:
                blobs[name] = f.read()
            for d in module_deps(blobs[name]):
                visit(d, stack + [name])
            order.append(name)

        for m in BOOT_MODULES:
            visit(m, [])
    os.unlink(tpath)
    moddir = os.path.join(root, "lib/modules", release)
    os.makedirs(moddir, exist_ok=True)
    for name in order:
        with open(os.path.join(moddir, name + ".ko"), "wb") as f:
            f.write(blobs[name])
    with open(os.path.join(root, "etc/fe-modules"), "w") as f:
        f.write("".join(f"/lib/modules/{release}/{n}.ko\n" for n in order))
    return release, order


# ---------------------------------------------------------------- vmlinux from bzImage
def extract_vmlinux(bz):
    """The uncompressed ELF kernel inside a bzImage (x86 boot protocol >= 2.08: the setup
    header names the compressed payload's offset and length)."""
    if bz[0x202:0x206] != b"HdrS":
        raise RuntimeError("vmlinuz has no x86 setup header")
    version, = struct.unpack_from("<H", bz, 0x206)
    if version < 0x208:
        raise RuntimeError(f"boot protocol {version:#x} < 2.08 has no payload fields")
    setup_sects = bz[0x1F1] or 4
    payload_offset, payload_length = struct.unpack_from("<II", bz, 0x248)
    start = (setup_sects + 1) * 512 + payload_offset
    payload = bz[start:start + payload_length]
    if payload.startswith(b"\xfd7zXZ\x00"):
        out = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(payload)
    elif payload.startswith(b"\x1f\x8b"):
        out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(payload)
    elif payload.startswith(b"\x28\xb5\x2f\xfd"):
        out = subprocess.run(["zstd", "-dc"], input=payload, stdout=subprocess.PIPE,
                             check=True).stdout
    else:
        raise RuntimeError(f"unknown kernel compression, magic {payload[:6].hex()}")
    if not has_pvh_note(out):
        raise RuntimeError("kernel has no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY)")
    return out


def has_pvh_note(elf):
    """True when a PT_NOTE segment holds the Xen note type 18 that QEMU's PVH boot uses."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        return False
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        ptype, _fl, off, _va, _pa, filesz = struct.unpack_from("<IIQQQQ", elf,
                                                               phoff + i * phentsize)
        if ptype != 4:  # PT_NOTE
            continue
        pos, end = off, off + filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            name = elf[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and ntype == 18:
                return True
            pos += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
    return False


# ---------------------------------------------------------------- closure check
def check_needed(root):
    """Every DT_NEEDED of every ELF file in the tree resolves inside the tree (the library
    closure is complete). Returns the sorted list of sonames present."""
    libdirs = ["lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64", "lib", "usr/lib"]
    have = set()
    for d in libdirs:
        p = os.path.join(root, d)
        if os.path.isdir(p):
            have.update(f for f in os.listdir(p) if ".so" in f)
    missing = {}
    for dirpath, _dirs, files in os.walk(root):
        if "/lib/modules" in dirpath:
            continue
        for fn in files:
            path = os.path.join(dirpath, fn)
            if os.path.islink(path):
                continue
            with open(path, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    continue
            out = run(["readelf", "-d", "-W", path])
            for soname in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out):
                if soname not in have:
                    missing.setdefault(soname, []).append(os.path.relpath(path, root))
    if missing:
        raise RuntimeError(f"library closure incomplete: {missing}")
    return sorted(have)


# ---------------------------------------------------------------- cpio (newc)
def write_cpio(root, path, extra_nodes):
    """An uncompressed newc archive of `root` (owner root, mtime 0) plus character device
    nodes [(name, mode, major, minor)] that the kernel needs before devtmpfs is mounted."""
    ino = [720000]

    def header(f, name, mode, size, nlink=1, rmaj=0, rmin=0):
        ino[0] += 1
        nb = name.encode() + b"\0"
        f.write(b"070701" + b"".join(b"%08X" % v for v in (
            ino[0], mode, 0, 0, nlink, 0, size, 0, 0, rmaj, rmin, len(nb), 0)))
        f.write(nb)
        f.write(b"\0" * (-(110 + len(nb)) % 4))

    with open(path, "wb") as f:
        for name, mode, maj, mnr in extra_nodes:
            header(f, name, 0o020000 | mode, 0, rmaj=maj, rmin=mnr)
        for dirpath, dirs, files in os.walk(root):
            dirs.sort()
            rel = os.path.relpath(dirpath, root)
            if rel != ".":
                header(f, rel, 0o040755, 0, nlink=2)
            for fn in sorted(files):
                p = os.path.join(dirpath, fn)
                name = os.path.normpath(os.path.join(rel, fn))
                st = os.lstat(p)
                if os.path.islink(p):
                    target = os.readlink(p).encode()
                    header(f, name, 0o120777, len(target))
                    data = target
                else:
                    with open(p, "rb") as src:
                        data = src.read()
                    header(f, name, 0o100000 | (st.st_mode & 0o7777), len(data))
                f.write(data)
                f.write(b"\0" * (-len(data) % 4))
        header(f, "TRAILER!!!", 0, 0)


# ---------------------------------------------------------------- main
def default_cache():
    base = os.environ.get("FEROCE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "feroce")
    return base


def build(cache, force):
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        log("SKIP: apt-get/dpkg-deb not found (the VM is built from Debian packages)")
        sys.exit(EXIT_SKIP)
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, "vm.lock"), "w") as lockf:
        fcntl.flock(lockf, fcntl.LOCK_EX)
        h = hashlib.sha256()
        for fn in ("vmimage.py", "guest_init.sh"):
            with open(os.path.join(HERE, fn), "rb") as f:
                h.update(f.read())
        key = h.hexdigest()[:16]
        outdir = os.path.join(cache, "vm-" + key)
        if os.path.exists(os.path.join(outdir, "initramfs.cpio")) and not force:
            os.utime(outdir)  # in use: keep
            return outdir
        t0 = time.monotonic()
        for attempt in (1, 2):
            try:
                pkgs = resolve_closure()
                kpkg, kver = resolve_kernel()
                break
            except (subprocess.CalledProcessError, RuntimeError) as e:
                # A fresh machine may never have fetched the package lists.
                if attempt == 1 and os.geteuid() == 0:
                    log(f"cannot resolve the guest's packages ({e}): apt-get update")
                    subprocess.run(["apt-get", "update", "-qq"], stdin=subprocess.DEVNULL)
                    continue
                log(f"SKIP: cannot resolve the guest's packages ({e}); run apt-get update")
                sys.exit(EXIT_SKIP)
        try:
            debs = download({n: v for n, (v, _) in pkgs.items()} | {kpkg: kver},
                            os.path.join(cache, "debs"))
        except (subprocess.CalledProcessError, RuntimeError) as e:
            log(f"SKIP: apt-get download failed ({e}): no package registry here?")
            sys.exit(EXIT_SKIP)
        tmp = tempfile.mkdtemp(prefix="vm-build-", dir=cache)
        try:
            root = os.path.join(tmp, "root")
            stage = os.path.join(tmp, "out")
            os.makedirs(stage)
            for name in sorted(pkgs):
                extract_userspace(debs[name], tmp, root)
            for d in ("dev", "proc", "sys", "tmp", "run", "shared", "etc", "root"):
                os.makedirs(os.path.join(root, d), exist_ok=True)
            release, order = extract_kernel(debs[kpkg], tmp, root, stage)
            sonames = check_needed(root)
            shutil.copyfile(os.path.join(HERE, "guest_init.sh"), os.path.join(root, "init"))
            os.chmod(os.path.join(root, "init"), 0o755)
            with open(os.path.join(root, "etc/passwd"), "w") as f:
                f.write("root:x:0:0:root:/root:/bin/sh\n")
            with open(os.path.join(root, "etc/group"), "w") as f:
                f.write("root:x:0:\n")
            write_cpio(root, os.path.join(stage, "initramfs.cpio"), [("dev/console", 0o600, 5, 1)])
            with open(os.path.join(stage, "manifest.txt"), "w") as f:
                f.write(f"kernel {kpkg} {kver} release {release}\n")
                f.write("modules " + " ".join(order) + "\n")
                for n, (v, _) in sorted(pkgs.items()):
                    f.write(f"package {n} {v}\n")
                for s in sonames:
                    f.write(f"soname {s}\n")
            if os.path.exists(outdir):
                shutil.rmtree(outdir)
            os.rename(stage, outdir)
            log(f"built {outdir} in {time.monotonic() - t0:.1f} s")
            # Images of other script versions unused for a day are dead weight (another
            # worktree may still be using a recent one).
            for old in os.listdir(cache):
                p = os.path.join(cache, old)
                if old.startswith("vm-") and not old.startswith("vm-build") and p != outdir \
                        and time.time() - os.path.getmtime(p) > 86400:
                    shutil.rmtree(p, ignore_errors=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return outdir


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=default_cache(),
                    help="cache directory (default $FEROCE_CACHE or ~/.cache/feroce)")
    ap.add_argument("--force", action="store_true", help="rebuild even when cached")
    a = ap.parse_args()
    print(build(a.cache, a.force))


if __name__ == "__main__":
    main()
