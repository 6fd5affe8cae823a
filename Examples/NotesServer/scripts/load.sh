#!/usr/bin/env bash
# Load test: on each framework (Hummingbird, Vapor), the notes server wired with Arbor against the same server wired
# by hand, then about a million requests to each Arbor-wired one while its resident memory (VmRSS) is sampled.
#
#   Examples/NotesServer/scripts/load.sh
#
# It builds the server in release, starts both wirings of each framework on 127.0.0.1, seeds notes, and runs `wrk` in
# bounded runs, alternating the two wirings of a framework round after round (ABBA order): on a shared, noisy machine
# only ratios measured close together in time mean much. wrk and the servers share the machine's cores, so the
# absolute numbers are lower than a separate client machine would show. Beside requests per second it prints each
# server's CPU time per request, read from /proc/PID/stat around each run: work elsewhere on the machine disturbs that
# far less.
#
# Settings, from the environment:
#   ROUNDS=5  DURATION=10s  THREADS=2  CONNECTIONS=32  TOTAL=1000000  WARMUP=50000  SAMPLE_EVERY=100000
#   SLICE=3s  PORT=8081 (the servers take PORT onwards: four, six with BASELINE)  NOTES=20
#   FRAMEWORKS="hummingbird vapor"
#   RELEASE_HOOKS=synchronous (or awaited: how the Arbor-wired Vapor server closes a request's child)
#   BY_THREAD=0 (1: after each round, each server's CPU time and context switches a request by kind of thread, the
#   event loops and the concurrency runtime's pool, from /proc/PID/task: the calibrated and BASELINE servers' too; a
#   thread that ends during a run is missed)
#   CALIBRATE=0 (1: a third server of each framework, the hand wiring that also runs the benchmark's `request_scope`
#   operation in every request, `--calibrate request_scope`, in the same rounds: the table adds what that operation
#   costs inside a request on this machine, and Arbor's extra as a multiple of it. The benchmark runs it in a loop, with
#   its code in the core's caches; a server runs it once between everything else a request runs)
#   CALIBRATION=request_scope (the operations calibrated servers run, one server each, in the same rounds: also
#   hand_wired, the operation's graph made by hand without a container, and dictionary_scope and array_scope, the
#   operation with a container written by hand, of dictionaries or of arrays, without Arbor's locks, checks and hooks;
#   and notes_request, the Arbor wiring's own calls on a `GET /notes/:id` in one piece; see common.sh. The table adds
#   each one's requests per second as a fraction of the hand wiring's)
#   WORKLOADS="show mixed" (the loads measured, in that order)
#   BASELINE= (the path of another build's NotesServer: its Arbor wiring runs as a third server of each framework, in
#   the same rounds, and the table adds this build's requests per second and CPU a request against it; copy the
#   binary out of .build first, since the build below replaces it)
#   BINARY= (the path of another build's NotesServer, run as "this build" instead of building this package: with
#   BASELINE, it compares two builds neither of which is this checkout's, such as two commits of the engine)
#   EXECUTOR= (event-loops: every server runs with `--executor event-loops`; see common.sh. A BASELINE build needs the
#   option too)
#   SERVER_CPUS= CLIENT_CPUS= (CPU lists for `taskset -c`: the servers run on SERVER_CPUS and wrk on CLIENT_CPUS, so
#   that the two do not take turns on the same cores and evict each other's caches; `SERVER_CPUS=0 CLIENT_CPUS=1` on a
#   two-core machine gives each server one core, and rounds that spread far less than unpinned ones)
#   HALT_POLL=0 (1: for the run, idle cores poll for up to a millisecond before they halt. For a KVM guest whose
#   haltpoll driver halts an idle core at once (`guest_halt_poll_ns` 0, as on the machine the README's figures come
#   from): there, waking wrk's halted core makes the server's every microsecond of work cost it one and a half to two
#   on Vapor, which answers each response with a wake-up, so Arbor's extra looks twice its size. Like turning off deep
#   idle states on a bare-metal benchmark machine. Needs root and /sys/module/haltpoll; the settings are put back on
#   exit)
# Needs wrk (`apt-get install -y wrk`), curl and awk; Linux, for /proc/PID/status.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10s}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
TOTAL=${TOTAL:-1000000}
WARMUP=${WARMUP:-50000}
SAMPLE_EVERY=${SAMPLE_EVERY:-100000}
SLICE=${SLICE:-3s}
PORT=${PORT:-8081}
NOTES=${NOTES:-20}
FRAMEWORKS=${FRAMEWORKS:-hummingbird vapor}
WORKLOADS=${WORKLOADS:-show mixed}
RELEASE_HOOKS=${RELEASE_HOOKS:-synchronous}
BY_THREAD=${BY_THREAD:-0}
BASELINE=${BASELINE:-}
CALIBRATE=${CALIBRATE:-0}
HALT_POLL=${HALT_POLL:-0}
SERVER_CPUS=${SERVER_CPUS:-}
CLIENT_CPUS=${CLIENT_CPUS:-}
wirings="arbor manual"
if [[ -n $BASELINE ]]; then
    [[ -x $BASELINE ]] || { echo "BASELINE must name a NotesServer binary: $BASELINE" >&2; exit 1; }
    wirings="$wirings baseline"
fi

for workload in $WORKLOADS; do
    [[ $workload == show || $workload == mixed ]] || { echo "WORKLOADS names show or mixed: $workload" >&2; exit 1; }
done

package="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for tool in wrk curl awk; do
    command -v "$tool" >/dev/null || { echo "load.sh needs $tool (wrk: apt-get install -y wrk)" >&2; exit 1; }
done
# What the servers and wrk are started with: `taskset -c CPUS`, or nothing. (`taskset` runs the server in its own
# process, so the pid `launch` records is still the server's.)
server_prefix=() client_prefix=()
if [[ -n $SERVER_CPUS$CLIENT_CPUS ]]; then
    command -v taskset >/dev/null || { echo "SERVER_CPUS and CLIENT_CPUS need taskset (util-linux)" >&2; exit 1; }
    if [[ -n $SERVER_CPUS ]]; then server_prefix=(taskset -c "$SERVER_CPUS"); fi
    if [[ -n $CLIENT_CPUS ]]; then client_prefix=(taskset -c "$CLIENT_CPUS"); fi
fi

# shellcheck source=common.sh
source "$package/scripts/common.sh"
calibrated_operations=""
if [[ $CALIBRATE == 1 ]]; then
    calibrated_operations=$calibrations
    for operation in $calibrations; do wirings="$wirings calibrated_$operation"; done
fi
if [[ $HALT_POLL == 1 ]]; then
    halt_poll=/sys/module/haltpoll/parameters
    if [[ ! -w $halt_poll/guest_halt_poll_ns ]]; then
        echo "HALT_POLL=1 needs the haltpoll idle driver of a KVM guest, and root: $halt_poll is not writable." >&2
        exit 1
    fi
    # name=value for each setting changed, to put back on exit, after common.sh's cleanup has stopped the servers.
    halt_poll_saved=()
    for setting in guest_halt_poll_ns guest_halt_poll_grow_start guest_halt_poll_allow_shrink; do
        halt_poll_saved+=("$setting=$(cat "$halt_poll/$setting")")
    done
    restore_halt_poll() {
        local saved
        for saved in "${halt_poll_saved[@]}"; do echo "${saved#*=}" >"$halt_poll/${saved%%=*}"; done
    }
    trap 'cleanup; restore_halt_poll' EXIT
    echo 1000000 >"$halt_poll/guest_halt_poll_ns"
    echo 1000000 >"$halt_poll/guest_halt_poll_grow_start"
    echo N >"$halt_poll/guest_halt_poll_allow_shrink"
    echo "== Idle cores poll for up to 1 ms before they halt (HALT_POLL=1; was: ${halt_poll_saved[*]})"
fi
# A server is named FRAMEWORK-WIRING (hummingbird-arbor, vapor-manual, …); FRAMEWORK-baseline is the Arbor wiring of
# the BASELINE build, FRAMEWORK-calibrated_OP the hand wiring with `--calibrate OP`.
declare -A port_of=()
next_port=$PORT
for framework in $FRAMEWORKS; do
    for wiring in $wirings; do
        port_of[$framework-$wiring]=$next_port
        next_port=$((next_port + 1))
    done
done
# A wrk script: each connection's requests cycle through the paths given after `--`.
cat >"$work/cycle.lua" <<'LUA'
local paths, next_path = {}, 0
function init(args)
    for i = 1, #args do paths[#paths + 1] = args[i] end
end
function request()
    next_path = next_path % #paths + 1
    return wrk.format("GET", paths[next_path], { ["X-User"] = "load" })
end
LUA

# start SERVER: starts the server (FRAMEWORK-WIRING) and waits until it answers.
start() {
    local name=$1 binary=$server wiring=${1#*-}
    if [[ $wiring == baseline ]]; then binary=$BASELINE wiring=arbor; fi
    wiring_options "$wiring"
    launch "$name" "${port_of[$name]}" "${server_prefix[@]}" "$binary" --framework "${name%-*}" "${options[@]}" \
        --hostname 127.0.0.1 --port "${port_of[$name]}" --release-hooks "$RELEASE_HOOKS" "${server_options[@]}"
}

# measure SERVER DURATION PATH…: runs wrk against that server; prints "requests/second requests cpu-µs/request
# system-µs/request", the last two from the server's user and system time (/proc/PID/stat), which other work on the
# machine does not skew; the system time is the kernel's share, the system calls.
measure() {
    local name=$1 duration=$2
    shift 2
    local output before after system_before system_after
    read -r before system_before < <(cpu_ticks "$name")
    if [[ $BY_THREAD == 1 ]]; then thread_stats "$name" >"$work/threads-before"; fi
    output=$("${client_prefix[@]}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$duration" -s "$work/cycle.lua" \
        "http://127.0.0.1:${port_of[$name]}" -- "$@")
    read -r after system_after < <(cpu_ticks "$name")
    if [[ $BY_THREAD == 1 ]]; then
        thread_stats "$name" >"$work/threads-after"
        join "$work/threads-before" "$work/threads-after" | awk -v hz="$(getconf CLK_TCK)" \
            -v count="$(awk '/ requests in / { print $1 }' <<<"$output")" '$5 + $6 + $7 > $2 + $3 + $4 {
                printf "    %-22s %7.1f µs  %6.3f voluntary  %6.3f involuntary switches a request\n", $1,
                    ($5 - $2) / hz * 1e6 / count, ($6 - $3) / count, ($7 - $4) / count }' >"$work/threads-$name"
    fi
    if grep -q "Non-2xx\|Socket errors" <<<"$output"; then
        echo "wrk reported errors:" >&2
        echo "$output" >&2
    fi
    awk -v ticks=$((after - before)) -v kernel=$((system_after - system_before)) -v hz="$(getconf CLK_TCK)" '
        /Requests\/sec/ { rps = $2 }
        / requests in / { count = $1 }
        END { printf "%s %s %.1f %.1f\n", rps, count, count ? ticks / hz * 1e6 / count : 0,
            count ? kernel / hz * 1e6 / count : 0 }' <<<"$output"
}

# cpu_ticks SERVER: the server's user + system time so far, and its system time, in clock ticks ("CPU SYSTEM").
cpu_ticks() { awk '{ print $14 + $15, $15 }' "/proc/${pid_of[$1]}/stat"; }

# thread_stats SERVER: per kind of thread (NIO's event loops, the concurrency runtime's pool, others by name), the
# user + system time in clock ticks and the voluntary and involuntary context switches so far, a line each, sorted for
# `join`.
thread_stats() {
    local task
    for task in "/proc/${pid_of[$1]}"/task/*; do
        printf '%s %s %s\n' "$(tr -c 'A-Za-z0-9.#\n-' '_' <"$task/comm")" "$(awk '{ print $14 + $15 }' "$task/stat")" \
            "$(awk '/^voluntary_ctxt/ { v = $2 } /^nonvoluntary_ctxt/ { n = $2 } END { print v, n }' "$task/status")"
    done | awk '{
            kind = ($1 ~ /^NIO-/) ? "event-loops" : ($1 ~ /default-qos/) ? "concurrency-pool" : $1
            t[kind] += $2; v[kind] += $3; n[kind] += $4 }
        END { for (kind in t) print kind, t[kind], v[kind], n[kind] }' | sort
}

echo "== Starting the servers on 127.0.0.1: ${!port_of[*]}"
declare -A note_of=()
for name in "${!port_of[@]}"; do
    start "$name"
    note_of[$name]=$(seed "${port_of[$name]}" "$NOTES")
    curl -fsS -H 'X-User: load' "http://127.0.0.1:${port_of[$name]}/notes/${note_of[$name]}" >/dev/null
    lines=$(curl -fsS -H 'X-User: load' "http://127.0.0.1:${port_of[$name]}/notes/export?pageSize=4" | wc -l)
    [[ $lines -eq $NOTES ]] || { echo "The $name server exported $lines notes, not $NOTES." >&2; exit 1; }
done
echo "all answer; $NOTES notes each"

# paths SERVER WORKLOAD: the paths a workload cycles through on that server.
paths() {
    local note="/notes/${note_of[$1]}"
    case $2 in
    show) echo "$note" ;;
    mixed) echo "$note /notes $note /notes/export?pageSize=8 $note" ;;
    esac
}

echo
echo "== Throughput: wrk -t$THREADS -c$CONNECTIONS -d$DURATION per run, each framework's wirings alternating"
echo "   show:  GET /notes/:id"
echo "   mixed: GET /notes/:id, GET /notes, GET /notes/:id, GET /notes/export (3 chunks), GET /notes/:id"
echo "   cpu µs/req: the server's CPU time per request; its ratio is manual/arbor, so both ratios read 'arbor as a"
echo "   fraction of manual' (1.0 = as fast)"
for framework in $FRAMEWORKS; do
    for workload in $WORKLOADS; do
        for wiring in $wirings; do
            measure "$framework-$wiring" 3s $(paths "$framework-$wiring" "$workload") >/dev/null
        done
        : >"$work/rates-$framework-$workload"
        : >"$work/costs-$framework-$workload"
        : >"$work/extra-$framework-$workload"
        : >"$work/extra-system-$framework-$workload"
        : >"$work/baseline-rates-$framework-$workload"
        : >"$work/baseline-extra-$framework-$workload"
        for operation in $calibrated_operations; do
            : >"$work/calibrated-extra-$operation-$framework-$workload"
            : >"$work/calibrated-rates-$operation-$framework-$workload"
        done
    done
done
printf '\n%-11s %-6s %-6s %12s %12s %8s %14s %15s %8s\n' framework round load "arbor req/s" "manual req/s" ratio \
    "arbor cpu µs" "manual cpu µs" ratio
for round in $(seq "$ROUNDS"); do
    for framework in $FRAMEWORKS; do
        for workload in $WORKLOADS; do
            order=$wirings
            if ((round % 2 == 0)); then order=$(tr ' ' '\n' <<<"$wirings" | tac | tr '\n' ' '); fi
            declare -A rate=() cost=() system=()
            for wiring in $order; do
                read -r "rate[$wiring]" _ "cost[$wiring]" "system[$wiring]" < <(measure "$framework-$wiring" \
                    "$DURATION" $(paths "$framework-$wiring" "$workload"))
            done
            rate_ratio=$(awk -v a="${rate[arbor]}" -v m="${rate[manual]}" 'BEGIN { printf "%.3f", a / m }')
            cost_ratio=$(awk -v a="${cost[arbor]}" -v m="${cost[manual]}" 'BEGIN { printf "%.3f", m / a }')
            echo "$rate_ratio" >>"$work/rates-$framework-$workload"
            echo "$cost_ratio" >>"$work/costs-$framework-$workload"
            awk -v a="${cost[arbor]}" -v m="${cost[manual]}" 'BEGIN { printf "%.1f\n", a - m }' \
                >>"$work/extra-$framework-$workload"
            awk -v a="${system[arbor]}" -v m="${system[manual]}" 'BEGIN { printf "%.1f\n", a - m }' \
                >>"$work/extra-system-$framework-$workload"
            printf '%-11s %-6s %-6s %12.0f %12.0f %8s %14s %15s %8s\n' "$framework" "$round" "$workload" \
                "${rate[arbor]}" "${rate[manual]}" "$rate_ratio" "${cost[arbor]}" "${cost[manual]}" "$cost_ratio"
            if [[ -n $BASELINE ]]; then
                awk -v a="${rate[arbor]}" -v b="${rate[baseline]}" 'BEGIN { printf "%.3f\n", a / b }' \
                    >>"$work/baseline-rates-$framework-$workload"
                awk -v a="${cost[arbor]}" -v b="${cost[baseline]}" 'BEGIN { printf "%.1f\n", a - b }' \
                    >>"$work/baseline-extra-$framework-$workload"
                printf '%-11s %-6s %-6s %12.0f %12s %8s %14s   this build: %s req/s, %+.1f µs CPU a request\n' \
                    "" "" "" "${rate[baseline]}" "(baseline)" "" "${cost[baseline]}" \
                    "$(tail -1 "$work/baseline-rates-$framework-$workload")×" \
                    "$(tail -1 "$work/baseline-extra-$framework-$workload")"
            fi
            for operation in $calibrated_operations; do
                calibrated=calibrated_$operation
                awk -v c="${cost[$calibrated]}" -v m="${cost[manual]}" 'BEGIN { printf "%.1f\n", c - m }' \
                    >>"$work/calibrated-extra-$operation-$framework-$workload"
                awk -v c="${rate[$calibrated]}" -v m="${rate[manual]}" 'BEGIN { printf "%.3f\n", c / m }' \
                    >>"$work/calibrated-rates-$operation-$framework-$workload"
                printf '%-11s %-6s %-6s %12.0f %12s %8s %14s   %s in a request: %+.1f µs CPU, %s× the req/s\n' \
                    "" "" "" "${rate[$calibrated]}" "(calibrated)" "" "${cost[$calibrated]}" "$operation" \
                    "$(tail -1 "$work/calibrated-extra-$operation-$framework-$workload")" \
                    "$(tail -1 "$work/calibrated-rates-$operation-$framework-$workload")"
            done
            if [[ $BY_THREAD == 1 ]]; then
                for threads in "$work/threads-$framework-"*; do
                    echo "  ${threads#"$work/threads-$framework-"}, by thread:"
                    cat "$threads"
                done
            fi
        done
    done
done
echo
for framework in $FRAMEWORKS; do
    for workload in $WORKLOADS; do
        echo "median, $framework $workload: requests/second arbor/manual $(median <"$work/rates-$framework-$workload")," \
            "CPU per request manual/arbor $(median <"$work/costs-$framework-$workload")," \
            "extra CPU per request $(median <"$work/extra-$framework-$workload") µs" \
            "(extra system time $(median <"$work/extra-system-$framework-$workload") µs)"
        if [[ -n $BASELINE ]]; then
            echo "median, $framework $workload: this build against BASELINE: requests/second" \
                "$(median <"$work/baseline-rates-$framework-$workload")×, CPU per request" \
                "$(median <"$work/baseline-extra-$framework-$workload" | awk '{ printf "%+.1f", $1 }') µs"
        fi
        for operation in $calibrated_operations; do
            echo "median, $framework $workload: $operation (--calibrate) run in a request:" \
                "$(median <"$work/calibrated-extra-$operation-$framework-$workload") µs CPU," \
                "$(median <"$work/calibrated-rates-$operation-$framework-$workload")× the hand wiring's requests/second;" \
                "Arbor's extra is" \
                "$(awk -v a="$(median <"$work/extra-$framework-$workload")" \
                    -v c="$(median <"$work/calibrated-extra-$operation-$framework-$workload")" \
                    'BEGIN { if (c > 0) printf "%.2f", a / c; else printf "n/a" }')× it"
        done
    done
done

rss() { awk '/^VmRSS/ { printf "%.1f MB", $2 / 1024 }' "/proc/${pid_of[$1]}/status"; }
for framework in $FRAMEWORKS; do
    name=$framework-arbor
    echo
    echo "== Memory: about $TOTAL requests (mixed, in wrk runs of $SLICE) to $name (pid ${pid_of[$name]}), VmRSS sampled"
    printf '%-14s %12s %12s\n' sample requests VmRSS
    printf '%-14s %12s %12s\n' start 0 "$(rss "$name")"
    total=0
    while ((total < WARMUP)); do
        read -r _ count _ < <(measure "$name" "$SLICE" $(paths "$name" mixed))
        total=$((total + count))
    done
    printf '%-14s %12s %12s\n' "after warm-up" "$total" "$(rss "$name")"
    next_sample=$SAMPLE_EVERY
    while ((total < TOTAL)); do
        read -r _ count _ < <(measure "$name" "$SLICE" $(paths "$name" mixed))
        total=$((total + count))
        if ((total >= next_sample || total >= TOTAL)); then
            printf '%-14s %12s %12s\n' "" "$total" "$(rss "$name")"
            next_sample=$(((total / SAMPLE_EVERY + 1) * SAMPLE_EVERY))
        fi
    done
    curl -fsS -H 'X-User: load' "http://127.0.0.1:${port_of[$name]}/notes/${note_of[$name]}" >/dev/null
    echo "still answering after $total requests"
done
