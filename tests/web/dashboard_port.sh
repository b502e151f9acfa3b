# Sourced by the web tests: dashboard_port PID waits (5 s at most) for the address the demo
# started as PID prints on $T/err, and sets $port; the test fails (killing PID) without one.
dashboard_port() {
    port=""
    for _ in $(seq 50); do
        port=$(sed -n 's|.*dashboard at http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$T/err")
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    kill "$1"
    cat "$T/err"
    fail "no dashboard address on stderr"
}
