#!/usr/bin/env bash
# The second sample world end to end, as CI runs it (CTest eval_fernhill_gate):
# generate it, draft its catalog and check the hand-edited one against the
# database, ingest its PDF and HTML documents, then the same gates as the
# sample bicycle shop's: route accuracy (eval_local_gate; the answer
# figures printed against their bounds) and the data planner's execution
# accuracy and refusals (eval_data_gate), on the test splits, bounds from
# eval/local_thresholds.json.
#
# usage: eval/worlds/fernhill/gate.sh BUILD_DIR [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$(cd "${1:?usage: gate.sh BUILD_DIR [OUT_DIR]}" && pwd)"
out="${2:-$build/eval-fernhill}"
split="${FERNHILL_SPLIT:-test}"
rm -rf "$out"
"$build/candor-eval" sample --out "$out"
"$build/candor" catalog draft --db "$out/fernhill.db" > "$out/draft.json"
"$build/candor" catalog check --db "$out/fernhill.db" --catalog "$here/catalog.json"
"$build/candor" ingest --kb "$out/docs" --data-dir "$out/var"
export CANDOR_SQL_DATABASE="$out/fernhill.db" CANDOR_SQL_CATALOG="$here/catalog.json"
unset CANDOR_LLM_BASE_URL CANDOR_LLM_API_KEY
"$build/candor-eval" local --split "$split" --routing "$here/routing.v1.json" \
  --answers "$here/answers.v1.json" --gate routeAccuracy --data-dir "$out/var"
"$build/candor-eval" data --split "$split" --questions "$here/data_questions.v1.json" \
  --data-dir "$out/var"
