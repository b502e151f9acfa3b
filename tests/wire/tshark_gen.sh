#!/bin/sh
# Interop: Wireshark's dissector (tshark) must decode every packet of `feroce gen` captures as
# InfiniBand over UDP 4791 with the expected fields and no malformed/expert warnings.
# usage: tshark_gen.sh FEROCE_BIN
PY=/usr/bin/python3
if ! command -v tshark >/dev/null 2>&1; then
  echo "SKIP: tshark not installed (Debian package tshark; scripts/deps.sh installs it)"
  exit 77
fi
if [ ! -x "$PY" ]; then
  echo "SKIP: $PY not found"
  exit 77
fi
exec "$PY" "$(dirname "$0")/tshark_gen.py" "$1"
