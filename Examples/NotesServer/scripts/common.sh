# What load.sh and profile-by-kind.sh share; each sources it after setting `package` (the NotesServer package's
# directory). It makes:
#   work      a temporary directory, removed on exit
#   pid_of    the servers' pids by name: every server recorded there is stopped on exit
#   server    the release NotesServer binary, built here
# and defines `median`, the median of the numbers on its input, one a line.

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

echo "== Building the server (release)"
swift build -c release --package-path "$package" --product NotesServer
server="$(swift build -c release --package-path "$package" --show-bin-path)/NotesServer"

median() {
    sort -g | awk '{ value[NR] = $1 }
        END { print (NR % 2) ? value[(NR + 1) / 2] : (value[NR / 2] + value[NR / 2 + 1]) / 2 }'
}
