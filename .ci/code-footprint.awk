# Reads a callgrind output file written with `--dump-instr=yes` and prints how much of Arbor's own code one
# operation runs: the distinct instructions of Arbor's functions that ran in at least half of the operations, and the
# 64-byte lines they lie on.
#
#     awk -v operations=N -f .ci/code-footprint.awk callgrind.out      # prints "INSTRUCTIONS LINES"
#
# `-v code=all` counts all the code instead of Arbor's: the framework, the runtime, libc. `-v functions=1` prints, after
# that line, one line for each function counted: the lines it took ("LINES NAME", most first; a line two functions
# share is counted for one of them). `-v events=1` prints instead each event the file counts (its `events:` line:
# `Ir`, and with `--cache-sim=yes` the simulated cache misses, `I1mr`, `D1mr`, …), summed over Arbor's functions and
# over all ("EVENT ARBOR ALL" a line, the whole run, no `operations` needed).
# `-v calls=1` prints instead the places in Arbor's code that call a function ("PLACES CALLS": the call instructions
# that ran in at least half of the operations, and the calls they made an operation), and with `-v functions=1` one
# line for each function called from them ("PLACES NAME", most first): the callees, the runtime's included.
# `Examples/NotesServer/scripts/code-a-request.sh` uses them all.
#
# Arbor's functions are those whose mangled name starts with module Arbor or ArborPrimitives (`$s5Arbor`,
# `$s15ArborPrimitives`: the module of the outermost entity, so a closure of another module that merely names an
# Arbor type is not counted, while a specialization or an outlined copy of an Arbor function is), and the C
# functions `carbor_…`. "At least half of the operations": an instruction the loop runs at least operations / 2
# times, which leaves out the set-up run once and the paths an operation takes only now and then.
#
# Why it is counted (the Performance article, "Code a request runs"): in a server, the code one request runs is far
# larger than the core's instruction cache, so every line of it is fetched again on each request, and the time Arbor
# adds there follows the code it runs more than its instructions: its lines (a first-level miss each, 2-3 ns on the
# Vapor notes server) and the places in them that call.

function number(text,    value, i, digit) {
    if (substr(text, 1, 2) != "0x") return text + 0
    value = 0
    for (i = 3; i <= length(text); i++) {
        digit = index("0123456789abcdef", tolower(substr(text, i, 1))) - 1
        value = value * 16 + digit
    }
    return value
}

# The id of a `fn=(id) name` or `cfn=(id) name` line, recording the name the first time an id appears.
function named(line,    opening, closing, id) {
    opening = index(line, "(")
    closing = index(line, ")")
    id = substr(line, opening + 1, closing - opening - 1)
    if (length(line) > closing + 1) names[id] = substr(line, closing + 2)
    return id
}

# Prints "COUNT NAME" for each name in `counts`, most first.
function printByCount(counts,    name, command) {
    command = "sort -rn"
    for (name in counts) print counts[name], name | command
    close(command)
}

function arbors(name) {
    return name ~ /^\$s5Arbor[^A-Za-z]/ || name ~ /^\$s15ArborPrimitives/ || name ~ /^carbor_/
}

# A cost line's first event column: after one position (`line`), unless `positions:` names more.
BEGIN { firstEvent = 2 }
/^events:/ { for (i = 2; i <= NF; i++) eventNames[++eventCount] = $i; next }
# `positions: instr line`: two columns of positions, so the events start at the third.
/^positions:/ { firstEvent = NF; next }
/^fn=/ {
    function_name = names[named($0)]
    arbor = arbors(function_name)
    counted = code == "all" || arbor
    next
}
# For `calls`, the callee's name without callgrind's mark of a recursion level ('2).
/^cfn=/ {
    callee = names[named($0)]
    if (calls) sub(/'[0-9]+$/, "", callee)
    next
}
# A call's line: the position that follows is the call instruction's, and its cost is the callee's, not counted.
/^calls=/ { call = 1; if (calls) split($1, made, "="); next }
/^[0-9+*-]/ {
    position = $1
    if (position == "*") {
    } else if (position ~ /^[+-]/) {
        address += (substr(position, 1, 1) == "-" ? -1 : 1) * number(substr(position, 2))
    } else {
        address = number(position)
    }
    if (call) {
        call = 0
        if (calls && counted) {
            callsFrom[address] += made[2]
            calleeOf[address] = callee
        }
        next
    }
    if (events) {
        # A function's own cost: the events after the positions (omitted ones are 0).
        for (i = firstEvent; i <= NF; i++) {
            allSum[i - firstEvent + 1] += $i
            if (arbor) arborSum[i - firstEvent + 1] += $i
        }
        next
    }
    # `positions: instr line`: the instruction, the source line, then the events, Ir first.
    if (counted && NF >= 3) {
        runs[address] += $3
        owner[address] = function_name
    }
}
END {
    if (events) {
        for (i = 1; i <= eventCount; i++) print eventNames[i], arborSum[i] + 0, allSum[i] + 0
        exit
    }
    if (operations <= 0) { print "code-footprint.awk: pass -v operations=N" > "/dev/stderr"; exit 1 }
    if (calls) {
        for (address in callsFrom) {
            if (callsFrom[address] * 2 < operations) continue
            places++
            madeCalls += callsFrom[address]
            placesCalling[calleeOf[address]]++
        }
        printf "%d %.0f\n", places, madeCalls / operations
        if (functions) printByCount(placesCalling)
        exit
    }
    for (address in runs) {
        if (runs[address] * 2 < operations) continue
        instructions++
        line = int(address / 64)
        if (line in lines) continue
        lines[line] = 1
        lineCount++
        linesOf[owner[address]]++
    }
    print instructions + 0, lineCount + 0
    if (functions) printByCount(linesOf)
}
