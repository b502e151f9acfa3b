#!/bin/sh
# feroce's Wireshark dissector (share/wireshark/feroce.lua) checked with tshark.
# usage: tshark_lua.sh FEROCE_BIN SC_CAPTURE_BIN
if ! command -v tshark >/dev/null 2>&1; then
  echo "SKIP: tshark not installed (Debian package tshark; scripts/deps.sh installs it)"
  exit 77
fi
here=$(dirname "$0")
exec /usr/bin/python3 "$here/tshark_lua.py" "$1" "$2" "$here/../../share/wireshark/feroce.lua"
