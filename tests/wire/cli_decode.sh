#!/bin/sh
# `feroce gen` / `feroce decode` behaviour on odd input: non-RoCE packets get a reason line,
# a corrupted packet shows icrc=bad, JSON Lines stay valid, errors give the documented codes.
# usage: cli_decode.sh FEROCE_BIN
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: $PY not found"; exit 77; }
exec "$PY" "$(dirname "$0")/cli_decode.py" "$1"
