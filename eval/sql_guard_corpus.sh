#!/usr/bin/env bash
# The SQL corpus through `candor sql-guard`, with a per-layer summary.
#
#   eval/sql_guard_corpus.sh [--db FILE] [--build DIR] [--out FILE]
#
# Converts eval/sql_corpus.json (a JSON array of {id, sql, expect, category,
# note}) to the JSON lines `candor sql-guard` reads, runs every statement
# through the static policy, the validation connection (authorizer) and a
# sandboxed executor process, and prints, per layer, how many dangerous
# statements it blocks and how many legitimate ones it allows, the overall
# verdicts (allowed, blocked, errors), which layer stopped each dangerous
# statement first, and every statement whose overall verdict contradicts its
# `expect`. Each layer's verdict is its own (see `candor sql-guard --help`):
# the authorizer also judges statements the static policy refused, and the
# executor runs them too; the executor here is the production one (it has
# its own authorizer), not the unguarded test-only process of the
# data_sql_corpus suite.
#
# --db     the sales database (default var/sales.db; generated with
#          `candor seed --data-dir var` when missing)
# --build  the build directory holding `candor` (default ./build)
# --out    also keep the raw sql-guard output (JSON lines) in FILE
#
# Needs jq. Exit 0 when every dangerous statement is blocked and every
# legitimate one allowed, 1 otherwise, 2 on a usage error.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
db=$here/var/sales.db
build=$here/build
out=
while [[ $# -gt 0 ]]; do
  case $1 in
    --db) db=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sql_guard_corpus: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v jq >/dev/null || {
  echo "sql_guard_corpus: jq is required (conf/packages.txt)" >&2; exit 2; }
[[ -x $build/candor ]] || {
  echo "sql_guard_corpus: no $build/candor (build it first)" >&2; exit 2; }
corpus=$here/eval/sql_corpus.json
if [[ ! -f $db ]]; then
  echo "sql_guard_corpus: generating $db" >&2
  "$build/candor" seed --data-dir "$(dirname "$db")" >/dev/null 2>&1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/candor-sqlcorpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
jq -c '.[] | {id, sql}' "$corpus" >"$tmp/in.jsonl"
start=$(date +%s%N)
# Exit 1 means "something was blocked", which the corpus wants.
rc=0
"$build/candor" sql-guard --db "$db" <"$tmp/in.jsonl" >"$tmp/out.jsonl" \
  2>"$tmp/err" || rc=$?
end=$(date +%s%N)
if [[ $rc -ne 0 && $rc -ne 1 ]]; then
  cat "$tmp/err" >&2
  exit 2
fi
[[ -n $out ]] && cp "$tmp/out.jsonl" "$out"

# Join each output line with its corpus entry by id, then count.
jq -r -n --slurpfile corpus "$corpus" \
  --arg ms "$(( (end - start) / 1000000 ))" --arg db "$db" '
  ($corpus[0] | map({key: .id, value: .}) | from_entries) as $by
  | [inputs | . + {expect: $by[.id | tostring].expect}] as $rows
  | ($rows | map(select(.expect == "block"))) as $bad
  | ($rows | map(select(.expect == "allow"))) as $ok
  | def n(f): map(select(f)) | length;
    def layer(name):
      "\(name | . + "               " | .[0:15]) "
      + "\($bad | n(.layers[name].verdict == "block"))/\($bad | length)"
      + " dangerous blocked, "
      + "\($ok | n(.layers[name].verdict == "allow"))/\($ok | length)"
      + " legitimate allowed";
  "sql-guard corpus: \($rows | length) statements (\($bad | length) "
  + "dangerous, \($ok | length) legitimate) on \($db), \($ms) ms",
  "overall: \($rows | n(.verdict == "allow")) allowed, "
  + "\($rows | n(.verdict == "block")) blocked, "
  + "\($rows | n(.verdict == "error")) errors",
  "per layer, each on its own:",
  "  " + layer("static_policy"),
  "  " + layer("authorizer"),
  "  " + layer("executor"),
  "first stop of the dangerous ones: "
  + ([$bad[] | .layer // "none"] | group_by(.)
     | map("\(.[0]) \(length)") | join(", ")),
  "writes blocked by every layer: "
  + "\([$bad[] | select($by[.id].category == "write")
        | select([.layers[] | .verdict == "block"] | all)] | length)"
  + "/\([$bad[] | select($by[.id].category == "write")] | length)",
  (($bad | map(select(.verdict != "block")))
   + ($ok | map(select(.verdict != "allow")))
   | if length == 0 then "every verdict matches the corpus"
     else "MISMATCH: " + (map("\(.id) \(.verdict) \(.rule)") | join("; "))
     end)
' "$tmp/out.jsonl" | tee "$tmp/summary"
grep -q '^every verdict matches' "$tmp/summary"
