#!/usr/bin/env bash
# Where a request's extra CPU goes: on each framework, the notes server wired with Arbor against the same server wired
# by hand, under `wrk` on `GET /notes/:id`, each sampled with `perf record -e cpu-clock` (a timer, so it works on
# machines without hardware counters). Each sample is put to a kind of code by its function's name, and the script
# prints the CPU a request of each kind, per round, and the medians of the rounds' differences (Arbor minus by hand).
#
#   Examples/NotesServer/scripts/profile-by-kind.sh
#
# The kinds:
#   arbor     Arbor's own functions (modules Arbor, ArborPrimitives, ArborVapor, ArborHummingbird)
#   refcount  swift_retain, swift_release and the rest of reference counting
#   alloc     malloc, free, the runtime's allocation of objects
#   mutex     pthread mutexes
#   runtime   the rest of the Swift runtime: metadata look-ups, casts, exclusivity checks
#   other     the rest of the request's code in user space: the framework, NIO, Foundation, the app
#   kernel    the kernel: sockets, TCP, system calls
#
# The server runs on SERVER_CPUS and wrk on CLIENT_CPUS (`taskset -c`), so that the two do not evict each other's
# caches; the wirings alternate round after round (ABBA).
#
# Settings, from the environment:
#   ROUNDS=4  DURATION=6s (whole seconds)  FREQUENCY=1999  THREADS=2  CONNECTIONS=32  PORT=8091
#   FRAMEWORKS="hummingbird vapor"
#   SERVER_CPUS=0  CLIENT_CPUS=1  RELEASE_HOOKS=synchronous
#   BINARY= (another build's NotesServer to profile instead of building this one)
#   EXECUTOR= (event-loops: each server runs with `--executor event-loops`; see common.sh)
# Needs perf (`apt-get install -y linux-perf`, and `kernel.perf_event_paranoid` at 2 or less), wrk, taskset, curl and
# awk; Linux.
set -euo pipefail

ROUNDS=${ROUNDS:-4}
DURATION=${DURATION:-6s}
FREQUENCY=${FREQUENCY:-1999}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-8091}
FRAMEWORKS=${FRAMEWORKS:-hummingbird vapor}
SERVER_CPUS=${SERVER_CPUS:-0}
CLIENT_CPUS=${CLIENT_CPUS:-1}
RELEASE_HOOKS=${RELEASE_HOOKS:-synchronous}
[[ $DURATION =~ ^[0-9]+s?$ ]] || { echo "DURATION is whole seconds, like 6s: $DURATION" >&2; exit 1; }
DURATION=${DURATION%s}s

package="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for tool in perf wrk taskset curl awk; do
    command -v "$tool" >/dev/null || { echo "profile-by-kind.sh needs $tool" >&2; exit 1; }
done

# shellcheck source=common.sh
source "$package/scripts/common.sh"

# start FRAMEWORK WIRING PORT: starts the server on SERVER_CPUS and waits until it answers.
start() {
    launch "$1-$2" "$3" taskset -c "$SERVER_CPUS" "$server" --framework "$1" --wiring "$2" --hostname 127.0.0.1 \
        --port "$3" --release-hooks "$RELEASE_HOOKS" "${server_options[@]}"
}

echo "wrk.headers['X-User'] = 'load'" >"$work/user.lua"
kinds="arbor refcount alloc mutex runtime other kernel"

# sample NAME PORT NOTE: wrk for DURATION while perf samples the server; prints the requests, then the CPU a request
# of each kind in the order of $kinds, in µs.
sample() {
    local name=$1 port=$2 note=$3 output
    # perf samples from before wrk starts until after it ends: an idle server adds no samples.
    taskset -c "$CLIENT_CPUS" perf record -q -e cpu-clock -F "$FREQUENCY" -p "${pid_of[$name]}" \
        -o "$work/perf.data" -- \
        sleep $((${DURATION%s} + 2)) >/dev/null 2>&1 &
    local perf_pid=$!
    sleep 1
    output=$(taskset -c "$CLIENT_CPUS" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s "$work/user.lua" \
        "http://127.0.0.1:$port/notes/$note")
    wait "$perf_pid" || true
    local requests
    requests=$(awk '/ requests in / { print $1 }' <<<"$output")
    perf report -i "$work/perf.data" --no-children --sort dso,sym --stdio -g none -n 2>/dev/null |
        awk -v requests="$requests" -v frequency="$FREQUENCY" -v kinds="$kinds" '
        function kind(dso, symbol) {
            if (dso ~ /^\[kernel/) return "kernel"
            if (symbol ~ /\$s(5Arbor|15ArborPrimitives|10ArborVapor|16ArborHummingbird)/) return "arbor"
            if (symbol ~ /^carbor_/) return "arbor"
            if (symbol ~ /swift_retain|swift_release|RefCounts|swift_bridgeObject|swift_unknownObject/) {
                return "refcount"
            }
            if (symbol ~ /malloc|free|_int_|swift_allocObject|swift_slowAlloc|swift_slowDealloc|swift_dealloc/) {
                return "alloc"
            }
            if (symbol ~ /pthread_mutex|lll_lock/) return "mutex"
            if (dso ~ /^libswiftCore/ && symbol ~ /^(swift|_swift|std::|getCache|tryCast)/) return "runtime"
            return "other"
        }
        # "  12.34%  567  dso  [.] symbol…"
        $1 ~ /%$/ && $4 ~ /^\[[.k]\]$/ {
            symbol = $5
            for (i = 6; i <= NF; i++) symbol = symbol " " $i
            samples[kind($3, symbol)] += $2
        }
        END {
            printf "%d", requests
            n = split(kinds, names, " ")
            for (i = 1; i <= n; i++) printf " %.3f", samples[names[i]] / frequency * 1e6 / requests
            print ""
        }'
}

next_port=$PORT
for framework in $FRAMEWORKS; do
    echo
    echo "== $framework: GET /notes/:id, wrk -t$THREADS -c$CONNECTIONS -d$DURATION on CPUs $CLIENT_CPUS," \
        "the server on CPUs $SERVER_CPUS, perf cpu-clock at $FREQUENCY Hz"
    declare -A port_of=() note_of=()
    for wiring in arbor manual; do
        port_of[$wiring]=$next_port
        next_port=$((next_port + 1))
        start "$framework" "$wiring" "${port_of[$wiring]}"
        note_of[$wiring]=$(seed "${port_of[$wiring]}")
    done
    # A round that is not counted: the first sample of a server ran slower than the rest in trials.
    for wiring in arbor manual; do
        sample "$framework-$wiring" "${port_of[$wiring]}" "${note_of[$wiring]}" >/dev/null
    done
    printf '%-6s %-7s %9s' round wiring requests
    for k in $kinds; do printf ' %9s' "$k"; done
    printf ' %9s   (µs a request)\n' total
    for kind in $kinds total; do : >"$work/extra-$kind"; done
    for round in $(seq "$ROUNDS"); do
        order="arbor manual"
        if ((round % 2 == 0)); then order="manual arbor"; fi
        declare -A line_of=()
        for wiring in $order; do
            line_of[$wiring]=$(sample "$framework-$wiring" "${port_of[$wiring]}" "${note_of[$wiring]}")
        done
        for wiring in arbor manual; do
            awk -v round="$round" -v wiring="$wiring" '{
                printf "%-6s %-7s %9d", round, wiring, $1
                for (i = 2; i <= NF; i++) { printf " %9.2f", $i; total += $i }
                printf " %9.2f\n", total
            }' <<<"${line_of[$wiring]}"
        done
        # The round's differences, a file for each kind and one for the total.
        paste -d ' ' <(echo "${line_of[arbor]}") <(echo "${line_of[manual]}") | awk -v kinds="$kinds" -v dir="$work" '{
            n = split(kinds, names, " ")
            for (i = 1; i <= n; i++) {
                difference = $(1 + i) - $(2 + n + i); total += difference
                print difference >>(dir "/extra-" names[i])
            }
            print total >>(dir "/extra-total")
        }'
    done
    printf '%-16s %9s' "median, extra" ""
    for kind in $kinds total; do printf ' %+9.2f' "$(median <"$work/extra-$kind")"; done
    printf '\n'
    for wiring in arbor manual; do
        kill "${pid_of[$framework-$wiring]}" 2>/dev/null || true
        wait "${pid_of[$framework-$wiring]}" 2>/dev/null || true
        unset "pid_of[$framework-$wiring]"
    done
done
