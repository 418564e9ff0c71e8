#!/usr/bin/env bash
# Build (once) a sched_ext test kernel from Debian's linux-source package and
# cache its bzImage outside the repo, keyed by kernel, source version and
# config hash. Prints the path of the cached bzImage on its last line of stdout.
#
#   tools/vm/build-kernel.sh [--kernel 7.3|6.12]          # build if not cached, print path
#   tools/vm/build-kernel.sh [--kernel 7.3|6.12] --path   # print the cached path or fail, build nothing
#
# Kernels (tools/versions.env): 7.3 (the default) is linux-source-7.3 from
# trixie-backports, downloaded through the Debian mirror this machine's apt
# sources already name, into the cache, without touching the system's apt
# setup; 6.12 is bookworm's linux-source-6.12, installed with apt.
# Config: kernel-common.config, then kernel-<version>.config.
#
# Env: WAKEPLACE_CACHE (default /var/cache/scx_wakeplace), JOBS (default nproc),
#      WAKEPLACE_KERNEL (default kernel when --kernel is not given).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../versions.env"
cache=${WAKEPLACE_CACHE:-/var/cache/scx_wakeplace}
jobs=${JOBS:-$(nproc)}
kver=${WAKEPLACE_KERNEL:-$DEFAULT_KERNEL}
path_only=0
while (($#)); do
	case $1 in
	--kernel) kver=${2:?--kernel needs 6.12 or 7.3}; shift 2 ;;
	--kernel=*) kver=${1#*=}; shift ;;
	--path) path_only=1; shift ;;
	*) echo "build-kernel: unknown argument: $1 (usage: build-kernel.sh [--kernel 7.3|6.12] [--path])" >&2; exit 2 ;;
	esac
done
case $kver in
6.12) pkg=$LINUX_SOURCE_6_12 suite="" ;;
7.3) pkg=$LINUX_SOURCE_7_3 suite=$LINUX_SOURCE_7_3_SUITE ;;
*) echo "build-kernel: unknown kernel '$kver': give 6.12 or 7.3" >&2; exit 2 ;;
esac
fragments=("$here/kernel-common.config" "$here/kernel-$kver.config")
cfghash=$(cat "${fragments[@]}" | sha256sum | cut -c1-12)
log() { echo "build-kernel[$kver]: $*" >&2; }

need_pkgs=(build-essential flex bison bc libelf-dev libssl-dev dwarves cpio kmod
	rsync zstd xz-utils python3)
[[ -n $suite ]] || need_pkgs+=("$pkg")
missing=()
for p in "${need_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})) && ((!path_only)); then
	log "installing ${missing[*]}"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# The source tarball and its version. 6.12: the installed package.
# 7.3: the .deb downloaded into $cache/deb with a private apt setup whose
# mirror is the one in the system's sources (never a host written here).
dl=$cache/deb/$pkg
fetch_backport() {
	local sources=/etc/apt/sources.list.d/debian.sources uri keyring
	if [[ -f $sources ]]; then
		uri=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' "$sources")
		keyring=$(awk '/^Signed-By:/ {print $2; exit}' "$sources")
	else
		uri=$(awk '$1 == "deb" && $2 !~ /security/ && $2 ~ /^http/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
	fi
	keyring=${keyring:-/usr/share/keyrings/debian-archive-keyring.gpg}
	[[ -n $uri ]] || { log "no Debian mirror found in $sources or /etc/apt/sources.list"; exit 1; }
	mkdir -p "$dl/lists/partial" "$dl/archives/partial"
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
		"$uri" "$suite" "$keyring" >"$dl/private.sources"
	local apt=(apt-get -q -o Dir::Etc::sourcelist="$dl/private.sources" -o Dir::Etc::sourceparts=/dev/null
		-o Dir::State::Lists="$dl/lists" -o Dir::Cache::Archives="$dl/archives"
		-o Dir::Cache::pkgcache="" -o Dir::Cache::srcpkgcache="")
	log "apt-get update ($suite, from the system's Debian mirror)"
	"${apt[@]}" update >&2
	rm -f "$dl"/*.deb
	(cd "$dl" && "${apt[@]}" download "$pkg" >&2)
	local deb
	deb=$(ls "$dl"/"$pkg"_*.deb | head -1)
	dpkg-deb -f "$deb" Version >"$dl/version.tmp"
	rm -rf "$dl/root"
	dpkg-deb -x "$deb" "$dl/root"
	mv "$dl/version.tmp" "$dl/version"
	rm -f "$deb"
}
if [[ -z $suite ]]; then
	srcver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
	tarball=/usr/src/$pkg.tar.xz
else
	if [[ ! -s $dl/version ]] && ((!path_only)); then
		fetch_backport
	fi
	srcver=$(cat "$dl/version" 2>/dev/null || true)
	tarball=$dl/root/usr/src/$pkg.tar.xz
fi
if [[ -z $srcver ]]; then
	log "$pkg is not available yet: run tools/vm/build-kernel.sh --kernel $kver"
	exit 1
fi
key="${kver}-${srcver}-${cfghash}"
out="$cache/kernel/$key"
if ((path_only)); then
	echo "$out/bzImage"
	[[ -s $out/bzImage ]]
	exit
fi
# One build per tree at a time: a second build of the same tree beside the
# first (a test or tools/fidelity.sh started while it ran) broke both with
# missing .o.d files. The second waits, then finds the bzImage cached.
mkdir -p "$cache/src"
exec 9>"$cache/src/$key.lock"
flock -n 9 || { log "another build of $key is running: waiting for it"; flock 9; }
if [[ -s $out/bzImage ]]; then
	log "cached $out/bzImage"
	echo "$out/bzImage"
	exit 0
fi
command -v vng >/dev/null || { log "vng not found: pip install virtme-ng"; exit 1; }

src="$cache/src/$key"
start=$(date +%s)
if [[ ! -f $src/Makefile ]]; then
	rm -rf "$src"
	mkdir -p "$src"
	log "unpacking $pkg $srcver"
	tar -xf "$tarball" -C "$src" --strip-components=1
fi
cd "$src"
cat "${fragments[@]}" >"$src/wakeplace.config"
vng --kconfig --config "$src/wakeplace.config" >&2
# vng's minimal config must keep what sched_ext and the policies need.
required=(SCHED_CLASS_EXT DEBUG_INFO_BTF SCHED_CORE SCHED_SMT SCHED_MC SCHED_MC_PRIO KPROBES PREEMPT_DYNAMIC)
case $kver in
6.12) required+=(SCHED_DEBUG PREEMPT) ;; # SCHED_DEBUG gates debugfs sched/ before 6.16
7.3) required+=(PREEMPT_LAZY) ;;
esac
for opt in "${required[@]}"; do
	grep -q "^CONFIG_${opt}=y" .config || {
		log "CONFIG_${opt} did not survive olddefconfig"
		exit 1
	}
done
log "make -j$jobs bzImage (cold build ~14 min on 2 cores)"
make -j"$jobs" bzImage >"$src/build.log" 2>&1 || {
	tail -40 "$src/build.log" >&2
	exit 1
}
mkdir -p "$out"
cp arch/x86/boot/bzImage "$out/bzImage.tmp"
cp .config "$out/config"
mv "$out/bzImage.tmp" "$out/bzImage"
log "built in $(($(date +%s) - start)) s -> $out/bzImage"
# The object files are not needed again; the unpacked source is (kernel headers for reading).
make clean >/dev/null 2>&1 || true
echo "$out/bzImage"
