#!/usr/bin/env bash
# What one request runs: on each framework, the notes server wired with Arbor and by hand, each under callgrind, on
# `GET /notes/:id`. For each wiring it prints the instructions a request, the distinct 64-byte lines of code a request
# runs (all code: the framework, NIO, Foundation, the runtime, libc, the app, Arbor), and of those Arbor's own (modules
# `Arbor` and `ArborPrimitives`), and the places in Arbor's code that call a function (a call instruction run in at
# least half of the requests); then Arbor's functions by the lines they take. `.ci/code-footprint.awk` counts the
# lines, as it does for the speed budget's `.code` rows. The README's "Every extra line is Arbor's own" reads one run.
#
#   Examples/NotesServer/scripts/code-a-request.sh
#
# Each server runs under `valgrind --tool=callgrind --dump-instr=yes`. After seeding a note and a warm-up, the script
# zeroes the counts, sends REQUESTS requests one at a time, dumps, and does the same with twice as many: the
# instructions a request are the difference of the two dumps divided by REQUESTS (start-up, seeding and warm-up cancel
# out), and a line counts when code on it ran in at least half of the first dump's requests (set-up run once, and
# paths a request takes now and then, are left out). Counts do not depend on what else the machine runs, so two
# builds can be compared run after run; the four servers take about a minute, after the build.
#
# Settings, from the environment:
#   REQUESTS=300  WARMUP=300  PORT=8101  FRAMEWORKS="hummingbird vapor"  WIRINGS="arbor manual"
#   (add `calibrated` to WIRINGS for the hand wiring with `--calibrate request_scope`: a request that also runs the
#   benchmark's request_scope operation, as `load.sh`'s CALIBRATE=1 measures it; `calibrated_hand_wired`,
#   `calibrated_dictionary_scope` or `calibrated_array_scope` for that operation without Arbor, and
#   `calibrated_notes_request` for the Arbor wiring's own calls in one piece, see common.sh)
#   RELEASE_HOOKS=synchronous  FUNCTIONS=15 (how many of Arbor's functions to list; 0 for none)
#   BINARY= (another build's NotesServer to count instead of building this one)
#   EXECUTOR= (event-loops: each server runs with `--executor event-loops`; see common.sh)
#   LAUNCH_WAIT=300 (seconds a server may take to start under valgrind)
#   CACHE=1 also simulates the caches (`--cache-sim=yes`) and prints, per wiring, the misses a request: of code (the
#     level-1 instruction cache) and of data (level-1 data cache, reads and writes), all told and in Arbor's functions.
#     The sizes are this machine's, a core's: 32 KB of code, 48 KB of data, 1 MB of level 2 as the last level;
#     CACHE_OPTIONS replaces them. Slower: about two minutes for the four servers.
# Needs valgrind (`apt-get install -y valgrind`, which brings callgrind_control), curl and awk; Linux.
set -euo pipefail

REQUESTS=${REQUESTS:-300}
WARMUP=${WARMUP:-300}
PORT=${PORT:-8101}
FRAMEWORKS=${FRAMEWORKS:-hummingbird vapor}
WIRINGS=${WIRINGS:-arbor manual}
RELEASE_HOOKS=${RELEASE_HOOKS:-synchronous}
FUNCTIONS=${FUNCTIONS:-15}
BINARY=${BINARY:-}
LAUNCH_WAIT=${LAUNCH_WAIT:-300}  # seconds: a server starts slowly under valgrind
CACHE=${CACHE:-0}
CACHE_OPTIONS=${CACHE_OPTIONS:---I1=32768,8,64 --D1=49152,12,64 --LL=1048576,16,64}
simulation=()
if [[ $CACHE == 1 ]]; then read -r -a simulation <<<"--cache-sim=yes $CACHE_OPTIONS"; fi

package="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
footprint="$package/../../.ci/code-footprint.awk"
for tool in valgrind callgrind_control curl awk strip; do
    command -v "$tool" >/dev/null || { echo "code-a-request.sh needs $tool (apt-get install -y valgrind)" >&2; exit 1; }
done

# shellcheck source=common.sh
source "$package/scripts/common.sh"
# Debian's valgrind 3.19 may refuse a release build's debug information ("Possibly corrupted debuginfo file"): a copy
# without it runs the same code and keeps the symbols that name the functions.
strip --strip-debug -o "$work/NotesServer" "$server"

# send PORT PATH COUNT: COUNT requests for PATH, one after the other on one kept-alive connection (curl reuses it for
# the URLs of one run). Not wrk: its main thread sleeps for the whole duration even when its script stops early.
send() {
    local url="http://127.0.0.1:$1$2"
    for _ in $(seq "$3"); do echo "url = \"$url\""; done >"$work/send.curl"
    curl -fsS -H 'X-User: load' --config "$work/send.curl" >/dev/null
}

# The instructions in a callgrind file's totals.
totals() { awk '/^totals:/ { print $2 }' "$1"; }

# misses FIRST SECOND: the simulated misses a request, from the dumps of REQUESTS and twice as many requests:
# "CODE DATA ARBOR-CODE ARBOR-DATA".
misses() {
    awk -v requests="$REQUESTS" '
        { sign = FNR == NR ? -1 : 1 }  # the first dump counts against the second
        { arbor[$1] += sign * $2; all[$1] += sign * $3 }
        END {
            if (!("I1mr" in all)) { print "no simulated misses in the dumps" > "/dev/stderr"; exit 1 }
            printf "%.0f %.0f %.0f %.0f\n", all["I1mr"] / requests, (all["D1mr"] + all["D1mw"]) / requests,
                arbor["I1mr"] / requests, (arbor["D1mr"] + arbor["D1mw"]) / requests
        }' <(awk -v events=1 -f "$footprint" "$1") <(awk -v events=1 -f "$footprint" "$2")
}

cache_rows=()
echo
printf '%-12s %-10s %14s %18s %18s %18s\n' framework wiring instructions "lines, all code" "lines of Arbor's" \
    "places that call"
for framework in $FRAMEWORKS; do
    for wiring in $WIRINGS; do
        out="$work/$framework-$wiring.callgrind"
        wiring_options "$wiring"
        arguments=("${options[@]}" "${server_options[@]}")
        launch "$framework-$wiring" "$PORT" valgrind --tool=callgrind --dump-instr=yes "${simulation[@]}" \
            --callgrind-out-file="$out" \
            "$work/NotesServer" --framework "$framework" "${arguments[@]}" --hostname 127.0.0.1 --port "$PORT" \
            --release-hooks "$RELEASE_HOOKS"
        id=$(seed "$PORT")
        send "$PORT" "/notes/$id" "$WARMUP"
        callgrind_control -z "${pid_of[$framework-$wiring]}" >/dev/null 2>&1
        send "$PORT" "/notes/$id" "$REQUESTS"
        callgrind_control -d "${pid_of[$framework-$wiring]}" >/dev/null 2>&1
        callgrind_control -z "${pid_of[$framework-$wiring]}" >/dev/null 2>&1
        send "$PORT" "/notes/$id" $((2 * REQUESTS))
        callgrind_control -d "${pid_of[$framework-$wiring]}" >/dev/null 2>&1
        kill "${pid_of[$framework-$wiring]}"
        wait "${pid_of[$framework-$wiring]}" 2>/dev/null || true
        unset "pid_of[$framework-$wiring]"

        instructions=$((($(totals "$out.2") - $(totals "$out.1")) / REQUESTS))
        read -r _ all_lines < <(awk -v operations="$REQUESTS" -v code=all -f "$footprint" "$out.1")
        awk -v operations="$REQUESTS" -v functions=1 -f "$footprint" "$out.1" >"$work/lines"
        read -r _ arbor_lines <"$work/lines"
        read -r call_places _ < <(awk -v operations="$REQUESTS" -v calls=1 -f "$footprint" "$out.1")
        printf '%-12s %-10s %14d %18d %18d %18d\n' "$framework" "$wiring" "$instructions" "$all_lines" "$arbor_lines" \
            "$call_places"
        if [[ $CACHE == 1 ]]; then
            read -r code data arbor_code arbor_data < <(misses "$out.1" "$out.2")
            cache_rows+=("$(printf '%-12s %-10s %12d %12d %14d %14d' "$framework" "$wiring" "$code" "$data" \
                "$arbor_code" "$arbor_data")")
        fi
        if [[ $wiring == arbor && $FUNCTIONS -gt 0 ]]; then
            # Not `tail | head`: under `pipefail`, head closing the pipe early would stop the script (SIGPIPE).
            sed -n "2,$((FUNCTIONS + 1))p" "$work/lines" >"$work/functions"
            if command -v swift >/dev/null; then swift demangle --simplified <"$work/functions"; else cat "$work/functions"; fi |
                awk '{ printf "    %4d  %s\n", $1, substr($0, length($1) + 2) }'
        fi
    done
    PORT=$((PORT + 1))
done
if [[ $CACHE == 1 ]]; then
    echo
    echo "Simulated cache misses a request ($CACHE_OPTIONS):"
    printf '%-12s %-10s %12s %12s %14s %14s\n' framework wiring "code, all" "data, all" "code, Arbor's" "data, Arbor's"
    printf '%s\n' "${cache_rows[@]}"
fi
