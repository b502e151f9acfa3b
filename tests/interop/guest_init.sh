#!/bin/busybox sh
# /init of the interop test VM (built by vmimage.py). Brings up Soft-RoCE on eth0 and then
# serves the 9p command channel: the host drops /shared/cmd/N.sh (N = 1, 2, ...) and the guest
# runs each one in the background, writing N.out (stdout+stderr) and then N.rc (exit code,
# renamed into place so that the host never reads half of it). No sshd, no getty.
#
# Kernel command line parameters: fe.ip=ADDR/PREFIX (eth0's address), fe.mtu=BYTES.
/bin/busybox mkdir -p /bbin
/bin/busybox --install -s /bbin
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/bbin
export LD_LIBRARY_PATH=
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
ulimit -l unlimited

say() { echo "guest: $*" >/dev/console; }
fail() {
    say "FAILED: $*"
    [ -d /shared/cmd ] && echo "$*" >/shared/init-failed
    poweroff -f
}

ip_addr=10.77.0.2/24
mtu=9000
for arg in $(cat /proc/cmdline); do
    case "$arg" in
    fe.ip=*) ip_addr=${arg#fe.ip=} ;;
    fe.mtu=*) mtu=${arg#fe.mtu=} ;;
    esac
done

# Modules in dependency order (vmimage.py computed it from their .modinfo). crc32_generic is
# first: rdma_rxe allocates the "crc32" shash and nothing autoloads it here.
for m in $(cat /etc/fe-modules); do
    insmod "$m" || fail "insmod $m"
done

mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 fe /shared || fail "mount 9p"
mkdir -p /shared/cmd

ip link set lo up
ip link set eth0 mtu "$mtu" || fail "mtu $mtu on eth0"
ip addr add "$ip_addr" dev eth0 || fail "address $ip_addr"
ip link set eth0 up || fail "eth0 up"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0"

# Ready means: the port is ACTIVE and the RoCEv2 GID of the IPv4 address is in the table.
i=0
while :; do
    state=$(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)
    case "$state" in *ACTIVE*)
        grep -qs "ffff:" /sys/class/infiniband/rxe0/ports/1/gids/* && break ;;
    esac
    i=$((i + 1))
    [ $i -gt 200 ] && fail "rxe0 not ACTIVE with an IPv4 GID after 10 s (state '$state')"
    usleep 50000
done
read -r up _ </proc/uptime
say "rxe ready after ${up} s"
echo "$up" >/shared/ready.tmp && mv /shared/ready.tmp /shared/ready

cd /shared/cmd || fail "cd /shared/cmd"
n=1
while :; do
    if [ -f "$n.sh" ]; then
        (sh "$n.sh" >"$n.out" 2>&1 </dev/null; echo $? >"$n.rc.tmp"; mv "$n.rc.tmp" "$n.rc") &
        n=$((n + 1))
    else
        usleep 20000
    fi
done
