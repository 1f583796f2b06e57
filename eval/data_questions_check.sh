#!/usr/bin/env bash
# Runs every reference SQL of eval/data_questions.v1.json against a sales.db
# with the sqlite3 CLI and fails on a SQL error, an empty result or more than
# 60 rows. Also checks that refusals carry a kind and no sql.
#
# usage: eval/data_questions_check.sh path/to/sales.db [path/to/data_questions.v1.json]
set -euo pipefail

db=${1:?usage: $0 sales.db [data_questions.v1.json]}
file=${2:-"$(dirname "$0")/data_questions.v1.json"}
max_rows=60

command -v sqlite3 >/dev/null || { echo "sqlite3 CLI not found" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq not found" >&2; exit 2; }
[[ -f $db ]] || { echo "no database at $db" >&2; exit 2; }
jq -e . "$file" >/dev/null || { echo "$file does not parse" >&2; exit 2; }

fail=0
checked=0
while IFS=$'\t' read -r id sql; do
  checked=$((checked + 1))
  if ! out=$(sqlite3 -batch -bail -readonly "$db" "$sql" 2>&1); then
    echo "FAIL $id: sql error: $out"; fail=$((fail + 1)); continue
  fi
  if [[ -z $out ]]; then
    echo "FAIL $id: empty result"; fail=$((fail + 1)); continue
  fi
  rows=$(printf '%s\n' "$out" | wc -l)
  if ((rows > max_rows)); then
    echo "FAIL $id: $rows rows (> $max_rows)"; fail=$((fail + 1)); continue
  fi
  if printf '%s\n' "$out" | grep -qE '(^|\|)(\||$)'; then
    echo "WARN $id: result has an empty (NULL) value"
  fi
done < <(jq -r '.questions[] | select(.expect == "answer") | [.id, .sql] | @tsv' "$file")

bad_refusals=$(jq -r '.questions[] | select(.expect == "refuse") | select((.kind // "") == "" or has("sql")) | .id' "$file")
if [[ -n $bad_refusals ]]; then
  echo "FAIL refusals without kind or with sql: $bad_refusals"; fail=$((fail + 1))
fi

answers=$(jq '[.questions[] | select(.expect == "answer")] | length' "$file")
refusals=$(jq '[.questions[] | select(.expect == "refuse")] | length' "$file")
echo "checked $checked reference queries; $answers answerable, $refusals refusals; $fail failure(s)"
((fail == 0))
