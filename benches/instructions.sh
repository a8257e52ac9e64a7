#!/usr/bin/env bash
# Instructions per message for each side, counted by callgrind (repeatable where wall clock on a
# shared machine is not; `perf stat -e instructions` is unsupported on many virtual machines):
#
#   benches/instructions.sh [MLLP (target/release/mllp)] [MESSAGES (100000)]
#
# The Rust floor is the `compare` bench binary run as `--floor-send` / `--floor-recv` (the one
# implementation every benchmark starts); FLOOR=PATH names a built one, otherwise it is built
# here with `cargo bench --locked --bench compare --no-run` (the bench profile: release).
#
# Writes MESSAGES ADT^A01 messages of 470 bytes (the `compare` workload), builds the C floor
# (benches/floor/floor.c, cc -O2), and runs each measured program under
# `valgrind --tool=callgrind` with its peer running natively:
#   sender side:   mllp send -q, mllp send --json, mllp send --connections 4 --order-key PID-3,
#                  the Rust floor sender and the C floor sender, each into the C floor receiver
#                  (window 64);
#   receiver side: mllp listen --format raw, the Rust floor receiver and the C floor receiver,
#                  each fed by the C floor sender (window 64).
# Prints one line per program: total instructions and instructions per message (start-up and
# reading the file included; a one-message run of `mllp send -q` gives the fixed part), then,
# where strace is installed, system calls per message for the two floors and for mllp send -q and
# mllp listen. The callgrind files stay in the scratch directory for callgrind_annotate.
set -euo pipefail
floor="${FLOOR:+$(realpath "$FLOOR")}"
cd "$(dirname "$0")/.."
mllp="$(realpath "${1:-target/release/mllp}")"
n="${2:-100000}"
scratch="${SCRATCH:-$(mktemp -d)}"
mkdir -p "$scratch"
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind" >&2; exit 1; }
cc -O2 -o "$scratch/floor-c" benches/floor/floor.c
floor="${floor:-$(cargo bench --locked --bench compare --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "compare" and m.get("executable"):
        print(m["executable"])')}"
[ -x "$floor" ] || { echo "instructions.sh: no Rust floor (the compare bench binary) built" >&2; exit 1; }
python3 - "$scratch/adt.hl7" "$n" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, 'wb') as f:
    for i in range(1, n + 1):
        head = ("MSH|^~\\&|SENDAPP|SENDFAC|RECVAPP|RECVFAC|20240101120000||ADT^A01^ADT_A01|MSG%010d|P|2.5\r"
                "EVN|A01|20240101120000\r"
                "PID|1||%08d^^^HOSP^MR||DOE^JOHN^Q||19700101|M|||123 MAIN ST^^SPRINGFIELD^IL^62701^USA||(555)555-0100|||S||A%08d\r"
                "PV1|1|I|WARD^101^A^HOSP||||1234^SMITH^ANNE^^^DR|||MED||||7|||1234^SMITH^ANNE^^^DR|IP|V%08d\r"
                "NTE|1||") % (i, i, i, i)
        m = head.encode()
        f.write(m + b'x' * (470 - len(m) - 1) + b'\r')
PY
head -c 470 "$scratch/adt.hl7" > "$scratch/one.hl7"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

total() { # the summary line of a callgrind file
  awk '/^summary:/ {print $2}' "$1"
}
report() { # name, file, messages
  local ir; ir="$(total "$2")"
  printf '%-52s %15s instructions  %8.0f per message\n' "$1" "$ir" "$(echo "$ir / $3" | bc -l)"
}

# The C floor receiver, natively, for the sender side.
"$scratch/floor-c" recv > "$scratch/recv.port" &
pids+=($!)
for _ in $(seq 50); do [ -s "$scratch/recv.port" ] && break; sleep 0.1; done
port="$(head -1 "$scratch/recv.port" | tr -dc 0-9)"
# A file already complete in the scratch directory (SCRATCH=DIR to rerun) is kept.
cg() {
  grep -q '^summary:' "$1" 2>/dev/null && return 0
  valgrind --tool=callgrind --callgrind-out-file="$1" "${@:2}" >/dev/null 2>"$1.log"
}
cg "$scratch/cg.send-q.1" "$mllp" -q send --progress never "$scratch/one.hl7" --host 127.0.0.1 --port "$port"
report "mllp send -q (1 message: the fixed part)" "$scratch/cg.send-q.1" 1
cg "$scratch/cg.send-q" "$mllp" -q send --progress never "$scratch/adt.hl7" --host 127.0.0.1 --port "$port"
report "mllp send -q" "$scratch/cg.send-q" "$n"
# Not -q: --quiet keeps only the summary record, and the records are what is measured.
cg "$scratch/cg.send-json" "$mllp" send --progress never --json "$scratch/adt.hl7" --host 127.0.0.1 --port "$port"
report "mllp send --json" "$scratch/cg.send-json" "$n"
# The C floor receiver serves one connection at a time: the keyed sender's four links go to a
# native mllp listen instead.
"$mllp" -q listen --port 0 --format raw >/dev/null 2>"$scratch/listen.native" &
pids+=($!)
for _ in $(seq 50); do grep -q 'listening on' "$scratch/listen.native" && break; sleep 0.1; done
lport="$(grep -o 'listening on [0-9.:]*' "$scratch/listen.native" | grep -o '[0-9]*$')"
cg "$scratch/cg.send-keyed" "$mllp" -q send --progress never --connections 4 --order-key PID-3 "$scratch/adt.hl7" --host 127.0.0.1 --port "$lport"
report "mllp send -q --connections 4 --order-key PID-3" "$scratch/cg.send-keyed" "$n"
cg "$scratch/cg.send-q-listen" "$mllp" -q send --progress never "$scratch/adt.hl7" --host 127.0.0.1 --port "$lport"
report "mllp send -q (into mllp listen, beside the keyed run)" "$scratch/cg.send-q-listen" "$n"
cg "$scratch/cg.floor-rust-send" "$floor" --floor-send --port "$port" --window 64 "$scratch/adt.hl7"
report "Rust floor send" "$scratch/cg.floor-rust-send" "$n"
cg "$scratch/cg.floor-c-send" "$scratch/floor-c" send --port "$port" --window 64 "$scratch/adt.hl7"
report "C floor send" "$scratch/cg.floor-c-send" "$n"

# The receivers under callgrind, fed natively by the C floor sender; stopped by SIGTERM.
receive() { # name, file, command...
  local out="$2"
  if grep -q '^summary:' "$out" 2>/dev/null; then report "$1" "$out" "$n"; return; fi
  valgrind --tool=callgrind --callgrind-out-file="$out" "${@:3}" >"$out.stdout" 2>"$out.log" &
  local pid=$!
  local p=""
  for _ in $(seq 300); do
    p="$( (grep -ho 'listening on [0-9.:]*' "$out.log" | grep -o '[0-9]*$'; grep -o '^[0-9]*' "$out.stdout") 2>/dev/null | head -1 || true)"
    [ -n "$p" ] && break
    sleep 0.1
  done
  "$scratch/floor-c" send --port "$p" --window 64 "$scratch/adt.hl7" >/dev/null
  kill -TERM "$pid"
  wait "$pid" || true
  report "$1" "$out" "$n"
}
receive "mllp listen --format raw" "$scratch/cg.listen" "$mllp" -q listen --port 0 --format raw
receive "Rust floor recv" "$scratch/cg.floor-rust-recv" "$floor" --floor-recv
receive "C floor recv" "$scratch/cg.floor-c-recv" "$scratch/floor-c" recv

# System calls per message for the two floors, natively under `strace -f -c` (the sender into
# the C floor receiver, each receiver fed by the C floor sender).
syscalls() { # name, file: strace's summary table
  printf '%-52s %15s syscalls      %8.3f per message\n' "$1" "$(awk '/ total$/ {print $4}' "$2")" \
    "$(echo "$(awk '/ total$/ {print $4}' "$2") / $n" | bc -l)"
}
if command -v strace >/dev/null; then
  strace -f -c -o "$scratch/st.floor-rust-send" "$floor" --floor-send --port "$port" --window 64 "$scratch/adt.hl7" >/dev/null
  syscalls "Rust floor send" "$scratch/st.floor-rust-send"
  strace -f -c -o "$scratch/st.floor-c-send" "$scratch/floor-c" send --port "$port" --window 64 "$scratch/adt.hl7" >/dev/null
  syscalls "C floor send" "$scratch/st.floor-c-send"
  for side in rust c; do
    if [ "$side" = rust ]; then set -- "$floor" --floor-recv; else set -- "$scratch/floor-c" recv; fi
    strace -f -c -o "$scratch/st.floor-$side-recv" "$@" >"$scratch/st.floor-$side-recv.port" &
    spid=$!
    for _ in $(seq 50); do [ -s "$scratch/st.floor-$side-recv.port" ] && break; sleep 0.1; done
    "$scratch/floor-c" send --port "$(head -1 "$scratch/st.floor-$side-recv.port")" --window 64 "$scratch/adt.hl7" >/dev/null
    # strace sums up when its child ends (a SIGTERM to strace itself only detaches it).
    kill -TERM "$(cat "/proc/$spid/task/$spid/children")"
    wait "$spid" || true
  done
  syscalls "Rust floor recv" "$scratch/st.floor-rust-recv"
  syscalls "C floor recv" "$scratch/st.floor-c-recv"
  strace -f -c -o "$scratch/st.send-q" "$mllp" -q send --progress never "$scratch/adt.hl7" --host 127.0.0.1 --port "$port" >/dev/null 2>&1
  syscalls "mllp send -q" "$scratch/st.send-q"
  strace -f -c -o "$scratch/st.listen" "$mllp" -q listen --port 0 --format raw >/dev/null 2>"$scratch/st.listen.log" &
  spid=$!
  for _ in $(seq 50); do grep -q 'listening on' "$scratch/st.listen.log" && break; sleep 0.1; done
  "$scratch/floor-c" send --port "$(grep -o 'listening on [0-9.:]*' "$scratch/st.listen.log" | grep -o '[0-9]*$')" \
    --window 64 "$scratch/adt.hl7" >/dev/null
  kill -TERM "$(cat "/proc/$spid/task/$spid/children")"
  wait "$spid" || true
  syscalls "mllp listen --format raw" "$scratch/st.listen"
fi
echo "callgrind files: $scratch"
