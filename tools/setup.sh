#!/usr/bin/env bash
# Install everything the build, the VM and the tests need on Debian 12 (root).
# Idempotent: skips what is already there. Versions: tools/versions.env.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.env"

pkgs=(
	# BPF build
	"$BPF_CLANG" llvm-19 libelf-dev zlib1g-dev libzstd-dev pkg-config build-essential
	# kernel build (tools/vm/build-kernel.sh)
	"$LINUX_SOURCE_6_12" flex bison bc libssl-dev dwarves cpio kmod rsync zstd xz-utils
	# VM (virtme-ng needs udev on the host for its virtio-serial ports)
	qemu-system-x86 udev python3 python3-pip
	# workloads and tracing used by tests and benchmarks
	rt-tests stress-ng bpftrace bpftool linux-perf util-linux procps strace
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "setup: apt-get install ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! vng --version 2>/dev/null | grep -q "$VIRTME_NG_VERSION"; then
	echo "setup: pip install virtme-ng==$VIRTME_NG_VERSION"
	python3 -m pip install -q "virtme-ng==$VIRTME_NG_VERSION" 2>/dev/null ||
		python3 -m pip install -q --break-system-packages "virtme-ng==$VIRTME_NG_VERSION"
	hash -r
fi
command -v vng >/dev/null || { echo "setup: vng not on PATH after pip install" >&2; exit 1; }

command -v cargo >/dev/null || { echo "setup: cargo not found: install a Rust toolchain (rustup)" >&2; exit 1; }
if command -v rustup >/dev/null; then
	rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
	rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
fi
echo "setup: ok ($("$BPF_CLANG" --version | head -1), vng $(vng --version 2>&1 | head -1))"
