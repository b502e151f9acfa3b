# Sourced by the shell tests: Debian's python3 (it has scapy; the pyenv one on PATH may not), a
# scratch directory removed on exit, and fail().
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
