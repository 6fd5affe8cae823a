# What load.sh, code-a-request.sh and profile-by-kind.sh share; each sources it after setting `package` (the
# NotesServer package's directory). It makes:
#   work      a temporary directory, removed on exit
#   pid_of    the servers' pids by name: every server recorded there is stopped on exit
#   server    the release NotesServer binary, built here; or BINARY, another build's, if set (nothing is built)
#   server_options  the options every server is started with, from the settings they share: EXECUTOR=event-loops
#             (`--executor event-loops`: Swift concurrency's jobs on NIO's event loops, so that a Hummingbird handler
#             runs on the event loop that read its request; Vapor's handlers run on an event loop either way), or none
#   calibrations  the operations a `calibrated_OP` server runs once a request besides the hand wiring's own work
#             (`--wiring manual --calibrate OP`), from CALIBRATION, one or more of: request_scope (the benchmark's
#             operation with Arbor, the default), hand_wired (its graph made by hand, no container), dictionary_scope
#             and array_scope (the operation with a container written by hand, of dictionaries or of arrays:
#             `Sources/NotesCore/HandWrittenScope.swift`)
# and defines `launch`, which starts a server and waits for it (LAUNCH_WAIT seconds at most, 10 unless set),
# `wiring_options`, `seed` and `median`.

work="$(mktemp -d)"
declare -A pid_of=()
cleanup() {
    for name in "${!pid_of[@]}"; do
        kill "${pid_of[$name]}" 2>/dev/null || true
        wait "${pid_of[$name]}" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

server_options=()
case ${EXECUTOR:-} in
    "") ;;
    event-loops) server_options=(--executor event-loops) ;;
    *) echo "EXECUTOR must be event-loops, or unset: $EXECUTOR" >&2; exit 1 ;;
esac

# The operations `NotesServer --calibrate` runs: its `CalibrationOperation` cases (CalibrationTests checks the two
# lists agree).
calibration_operations="request_scope hand_wired dictionary_scope array_scope notes_request"
calibrations=${CALIBRATION:-request_scope}
for operation in $calibrations; do
    [[ " $calibration_operations " == *" $operation "* ]] ||
        { echo "CALIBRATION names one or more of: $calibration_operations (not $operation)" >&2; exit 1; }
done

if [[ -n ${BINARY:-} ]]; then
    [[ -x $BINARY ]] || { echo "BINARY must name a NotesServer binary: $BINARY" >&2; exit 1; }
    echo "== The server: $BINARY (BINARY; nothing built)"
    server=$BINARY
else
    echo "== Building the server (release)"
    swift build -c release --package-path "$package" --product NotesServer
    server="$(swift build -c release --package-path "$package" --show-bin-path)/NotesServer"
fi

# launch NAME PORT COMMAND…: runs COMMAND, a server (its output in $work/NAME.log), records its pid as pid_of[NAME],
# and waits until it answers on PORT; stops the script if something answers there already or the server never does.
# (COMMAND is run directly, not in a subshell, so that the pid is the server's own, whose /proc/PID/stat the scripts
# read.)
launch() {
    local name=$1 port=$2
    shift 2
    if curl -fs "http://127.0.0.1:$port/notes" >/dev/null 2>&1; then
        echo "Something already answers on port $port: set PORT to a first port with enough free ones after it." >&2
        exit 1
    fi
    "$@" >"$work/$name.log" 2>&1 &
    pid_of[$name]=$!
    for _ in $(seq $((${LAUNCH_WAIT:-10} * 10))); do
        if curl -fs -H 'X-User: load' "http://127.0.0.1:$port/notes" >/dev/null 2>&1; then return; fi
        kill -0 "${pid_of[$name]}" 2>/dev/null || break
        sleep 0.1
    done
    echo "The $name server did not answer on port $port:" >&2
    cat "$work/$name.log" >&2
    exit 1
}

# wiring_options WIRING: the server's options for a wiring: arbor, manual, or calibrated_OP (the hand wiring that also
# runs OP once a request; `calibrated` alone is calibrated_request_scope). Sets the array `options`.
wiring_options() {
    case $1 in
        calibrated) options=(--wiring manual --calibrate request_scope) ;;
        calibrated_*) options=(--wiring manual --calibrate "${1#calibrated_}") ;;
        *) options=(--wiring "$1") ;;
    esac
}

# seed PORT [COUNT]: adds COUNT notes (1 unless given) to the server on PORT, and prints the last one's id.
seed() {
    local port=$1 reply=""
    for number in $(seq "${2:-1}"); do
        reply=$(curl -fsS -X POST -H 'content-type: application/json' -H 'X-User: load' \
            -d "{\"title\":\"Note $number\",\"body\":\"Seeded for the load test.\"}" "http://127.0.0.1:$port/notes")
    done
    sed -E 's/.*"id":"([^"]+)".*/\1/' <<<"$reply"
}

# median: the median of the numbers on its input, one a line.
median() {
    sort -g | awk '{ value[NR] = $1 }
        END { print (NR % 2) ? value[(NR + 1) / 2] : (value[NR / 2] + value[NR / 2 + 1]) / 2 }'
}
