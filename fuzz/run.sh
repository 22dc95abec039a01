#!/usr/bin/env bash
# Runs each fuzz target in turn for SECONDS (default 600) in one process at the lowest
# priority, from the seed corpora (built by seed_corpus.sh when missing), and prints
# a table: target, seconds, executions, findings (files in artifacts/TARGET). A
# finding is reproduced with `cargo +nightly fuzz run TARGET artifacts/TARGET/FILE`.
# Usage: fuzz/run.sh [SECONDS] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:-600}
shift || true
targets=${*:-dimacs dimacs_gzip seeds_png image video_stream settings}
[ -d corpus ] || ./seed_corpus.sh
cargo +nightly fuzz build || exit 1
mkdir -p logs
for t in $targets; do
  mkdir -p "corpus/$t" "artifacts/$t"
  nice -n 19 cargo +nightly fuzz run "$t" "corpus/$t" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 \
    -print_final_stats=1 >"logs/$t.log" 2>&1
  echo "$t: exit $?"
done
printf '\n| target | seconds | executions | findings |\n|---|---|---|---|\n'
for t in $targets; do
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "logs/$t.log" | grep -o '[0-9]*$' | tail -1)
  found=$(ls "artifacts/$t" 2>/dev/null | wc -l)
  printf '| %s | %s | %s | %s |\n' "$t" "$secs" "${runs:-?}" "$found"
done
