#!/bin/sh
# Installs the Debian packages the build, the tests and the benchmarks need (the server
# adds libuv, http-parser, wslay, jansson, argon2, OpenSSL, jemalloc; its tests
# python3-websockets).
# Idempotent: installs only what is missing. Works as root or through sudo.
set -eu
PKGS="build-essential cmake pkg-config clang libclang-rt-14-dev clang-format python3 sqlite3 \
libedit-dev libcriterion-dev libxxhash-dev libzstd-dev \
libuv1-dev libhttp-parser-dev libwslay-dev libjansson-dev libargon2-dev libssl-dev libjemalloc-dev \
python3-websockets curl"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
echo "setup: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
