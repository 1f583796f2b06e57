#!/usr/bin/env bash
# candor setup: installs the Debian 12 packages listed in conf/packages.txt
# (only those missing, so it is safe to run again) and the test-only npm
# clients in tests/clients/{openai,mcp}, then configures and builds
# the project with CMake + Ninja + ccache into ./build.
#
#   conf/setup.sh            install + configure + build (Release)
#   conf/setup.sh --no-build install + configure only
#   BUILD_TYPE=Debug conf/setup.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
build_dir=${BUILD_DIR:-$root/build}
build_type=${BUILD_TYPE:-RelWithDebInfo}
do_build=1
[ "${1:-}" = "--no-build" ] && do_build=0

log() { printf 'setup: %s\n' "$*" >&2; }

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); else
    log "not root and no sudo: install the packages in conf/packages.txt by hand"
  fi
fi

mapfile -t wanted < <(grep -v -E '^\s*(#|$)' "$here/packages.txt")
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${#missing[@]} package(s): ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  log "all ${#wanted[@]} packages present"
fi

# The official npm clients the e2e tests run: openai (e2e_openai_client,
# tests/clients/openai) and the MCP TypeScript SDK (e2e_mcp_client,
# tests/clients/mcp), each pinned by its package-lock.json (node_modules
# is not committed). npm ci only when a lock file changed since the last run.
if ! command -v npm >/dev/null 2>&1; then
  log "installing npm"
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    --no-install-recommends npm || true
fi
for client in openai:e2e_openai_client mcp:e2e_mcp_client; do
  client_dir=$root/tests/clients/${client%%:*}
  client_test=${client#*:}
  # Only a test needs it: without npm or the registry the server still
  # builds and runs, and the test fails naming this step.
  if ! command -v npm >/dev/null 2>&1; then
    log "warning: npm is missing, so $client_test will fail; install" \
        "nodejs and npm, then run conf/setup.sh again"
  elif [ ! "$client_dir/node_modules/.package-lock.json" -nt \
         "$client_dir/package-lock.json" ]; then
    log "installing the npm client of $client_test into $client_dir/node_modules"
    npm ci --prefix "$client_dir" --no-audit --no-fund --loglevel=error >/dev/null ||
      log "warning: npm ci failed, so $client_test will fail; run:" \
          "npm ci --prefix $client_dir"
  else
    log "npm client of $client_test present"
  fi
done

export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
if [ ! -f "$build_dir/build.ninja" ]; then
  log "configuring $build_dir ($build_type)"
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" >&2
fi
if [ "$do_build" = 1 ]; then
  log "building (this takes several minutes on 2 cores the first time)"
  cmake --build "$build_dir" -j "${JOBS:-2}" >&2
  log "built $build_dir/candor"
fi
