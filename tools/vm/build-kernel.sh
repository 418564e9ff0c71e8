#!/usr/bin/env bash
# Build (once) the sched_ext test kernel from Debian's linux-source-6.12 and
# cache its bzImage outside the repo, keyed by source version + config hash.
# Prints the path of the cached bzImage on its last line of stdout.
#
#   tools/vm/build-kernel.sh            # build if not cached, print path
#   tools/vm/build-kernel.sh --path     # print the path it would use, build nothing
#
# Env: WAKEPLACE_CACHE (default /var/cache/scx_wakeplace), JOBS (default nproc).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
fragment="$here/kernel.config"
cache=${WAKEPLACE_CACHE:-/var/cache/scx_wakeplace}
jobs=${JOBS:-$(nproc)}

need_pkgs=(linux-source-6.12 build-essential flex bison bc libelf-dev libssl-dev
	dwarves cpio kmod rsync zstd xz-utils python3)
missing=()
for p in "${need_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	if [[ ${1:-} == --path ]]; then
		echo "build-kernel: missing packages: ${missing[*]}" >&2
		exit 1
	fi
	echo "build-kernel: installing ${missing[*]}" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi
command -v vng >/dev/null || { echo "build-kernel: vng not found: pip install virtme-ng" >&2; exit 1; }

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
cfghash=$(sha256sum "$fragment" | cut -c1-12)
key="6.12-${srcver}-${cfghash}"
out="$cache/kernel/$key"
if [[ ${1:-} == --path ]]; then
	echo "$out/bzImage"
	exit 0
fi
if [[ -s $out/bzImage ]]; then
	echo "build-kernel: cached $out/bzImage" >&2
	echo "$out/bzImage"
	exit 0
fi

src="$cache/src/$key"
start=$(date +%s)
if [[ ! -f $src/Makefile ]]; then
	rm -rf "$src"
	mkdir -p "$src"
	echo "build-kernel: unpacking linux-source-6.12 $srcver" >&2
	tar -xf /usr/src/linux-source-6.12.tar.xz -C "$src" --strip-components=1
fi
cd "$src"
vng --kconfig --config "$fragment" >&2
# vng's minimal config must keep what sched_ext and the policies need.
for opt in SCHED_CLASS_EXT DEBUG_INFO_BTF SCHED_CORE SCHED_SMT SCHED_MC SCHED_MC_PRIO SCHED_DEBUG; do
	grep -q "^CONFIG_${opt}=y" .config || {
		echo "build-kernel: CONFIG_${opt} did not survive olddefconfig" >&2
		exit 1
	}
done
echo "build-kernel: make -j$jobs bzImage (cold build ~12-20 min on 2 cores)" >&2
make -j"$jobs" bzImage >"$src/build.log" 2>&1 || {
	tail -40 "$src/build.log" >&2
	exit 1
}
mkdir -p "$out"
cp arch/x86/boot/bzImage "$out/bzImage.tmp"
cp .config "$out/config"
mv "$out/bzImage.tmp" "$out/bzImage"
echo "build-kernel: built in $(($(date +%s) - start)) s -> $out/bzImage" >&2
echo "$out/bzImage"
