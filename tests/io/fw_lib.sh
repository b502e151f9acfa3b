# Sourced by the tests against the firmware model (fw_model.py), after BIN, PY and HERE are set:
# a work folder D, loopback addresses of the test's own (HOST the host, FE the front-end, PFX.N
# for more), and the model's start and stop. The caller's cleanup calls fw_cleanup.
D=$(mktemp -d)
PFX=127.$((100 + $$ % 100)).$((($$ / 100) % 250 + 1))
HOST=$PFX.1
FE=$PFX.2
MPID=

model() { # state file, model options...
    st=$1
    shift
    $PY "$HERE/fw_model.py" "$BIN" "$FE" "$st" "$@" &
    MPID=$!
    sleep 0.3
}

stop_model() {
    kill -TERM "$MPID"
    wait "$MPID" || true
    MPID=
}

fw_cleanup() {
    if [ -n "$MPID" ]; then kill "$MPID" 2>/dev/null || true; fi
    rm -rf "$D"
}
