#!/usr/bin/env bash
# Installs the Debian packages feroce builds and tests with, when they are missing.
# Needs root for apt-get; without root it only reports what is missing.
set -eu
pkgs="cmake make gcc clang pkg-config libcmocka-dev libisal-dev zlib1g-dev libpcap-dev
      libinih-dev libyaml-dev libjson-c-dev libsqlite3-dev sqlite3 tshark python3 python3-scapy clang-format iproute2 gnuplot-nox
      libibverbs-dev libxdp-dev libbpf-dev qemu-system-x86 libmicrohttpd-dev prometheus chromium chromium-driver
      openmpi-bin libopenmpi-dev"
# The web view's charting library comes from npm at build time; Debian's npm only when no
# npm is on PATH (a NodeSource nodejs carries its own).
command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
[ "${FEROCE_DEPS_EXTRA:-}" ] && pkgs="$pkgs $FEROCE_DEPS_EXTRA"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "deps.sh: missing Debian packages:$missing (run as root to install them)" >&2
  exit 0
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture: answer no, without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq </dev/null
apt-get install -y -qq --no-install-recommends $missing </dev/null >/dev/null
