#!/usr/bin/env bash
# Install peer sched_ext schedulers (published crates) for A/B comparisons.
#
#   tools/install-peers.sh [PEER...]     default: scx_bpfland scx_cosmos
#
# Versions are pinned by SCX_PEERS_VERSION in tools/versions.env. Binaries go
# to $WAKEPLACE_PEERS_ROOT (default /var/cache/scx_wakeplace/peers)/bin, outside
# the repository, where the VM (which sees the host filesystem read-only) and
# `wakeplace-ab --peer-dir` find them. Idempotent: a peer whose binary already
# reports the pinned version is skipped. A cold build takes a long time on a
# small machine (tens of minutes per peer on 2 cores).
#
# scx_cosmos 1.1.4's build refuses pahole < 1.26 (Debian 12 has 1.24): that
# pahole cannot describe KF_IMPLICIT_ARGS kfuncs of newer kernels. Kernels
# without them, such as the 6.12 test kernel, are not affected, and
# SCX_SKIP_PAHOLE_CHECK=1 (passed through to the build) skips the check.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
root="${WAKEPLACE_PEERS_ROOT:-/var/cache/scx_wakeplace/peers}"
peers=("$@")
[ ${#peers[@]} -gt 0 ] || peers=(scx_bpfland scx_cosmos)
mkdir -p "$root"
rc=0
for p in "${peers[@]}"; do
    case "$p" in
        scx_bpfland|scx_cosmos|scx_lavd|scx_rusty|scx_flash) ;;
        *) echo "install-peers: unknown peer '$p'" >&2; exit 2 ;;
    esac
    bin="$root/bin/$p"
    if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q -- "$SCX_PEERS_VERSION"; then
        echo "install-peers: $p $SCX_PEERS_VERSION already in $bin"
        continue
    fi
    echo "install-peers: building $p =$SCX_PEERS_VERSION into $root (BPF_CLANG=$BPF_CLANG)"
    if [ "$p" = scx_cosmos ] && [ -z "${SCX_SKIP_PAHOLE_CHECK:-}" ]; then
        echo "install-peers: note: scx_cosmos needs pahole >= 1.26 unless SCX_SKIP_PAHOLE_CHECK=1 (see above)"
    fi
    if ! BPF_CLANG="$BPF_CLANG" cargo install --locked "$p" \
            --version "=$SCX_PEERS_VERSION" --root "$root"; then
        echo "install-peers: FAILED to build $p" >&2
        rc=1
    fi
done
exit $rc
