#!/bin/sh
# Interop: scapy's RoCE layer (scapy.contrib.roce) and feroce must agree on the ICRC of random
# packets of random sizes, IPv4 and IPv6, in both directions. usage: scapy_icrc.sh FEROCE_BIN
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c "import scapy.contrib.roce" >/dev/null 2>&1; then
  echo "SKIP: $PY with scapy (Debian package python3-scapy) not available"
  exit 77
fi
exec "$PY" "$(dirname "$0")/scapy_icrc.py" "$1"
