#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and locate the deter testbed kernel: Debian's linux-source-6.12 with
# patches/series applied and testbed/kernel.config merged on allnoconfig.
#
#   kernel.sh build     build (or reuse) the kernel for FLAVOUR
#   kernel.sh tree      print the prepared source tree (for KDIR)
#   kernel.sh image     print the bzImage path
#   kernel.sh release   print the kernel release string
#   kernel.sh key       print the cache key
#
# Trees live under $DETER_CACHE/kernel/<flavour>-<key> (DETER_CACHE defaults
# to ~/.cache/deter). The key hashes everything a tree is built from: the
# source package version, the patches, the config fragments and build_rev
# (bumped whenever this script changes what it builds).
# A tree whose key matches is reused as is; anything else is rebuilt, with
# ccache keeping a rebuild after a small patch change short.
set -euo pipefail

prog=kernel.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
cache=${DETER_CACHE:-$HOME/.cache/deter}
flavour=${FLAVOUR:-default}
src_pkg=linux-source-6.12
src_tar=/usr/src/$src_pkg.tar.xz
build_rev=2		# 2: the release file holds the release only

die() { echo "$prog: $*" >&2; exit 1; }

case "$flavour" in
default) fragments=("$here/kernel.config"); localversion=-deter ;;
debug) fragments=("$here/kernel.config" "$here/kernel-debug.config")
       localversion=-deter-debug ;;
*) echo "$prog: unknown FLAVOUR '$flavour' (default, debug)" >&2; exit 2 ;;
esac

src_version() {
	dpkg-query -W -f='${Version}' "$src_pkg" 2>/dev/null || true
}

ensure_source() {
	[ -n "$(src_version)" ] && [ -f "$src_tar" ] && return
	echo "$prog: installing $src_pkg" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"$src_pkg" >&2 || die "cannot install $src_pkg (run apt-get update?)"
}

key() {
	local v
	v=$(src_version)
	[ -n "$v" ] || die "$src_pkg is not installed (run: make deps)"
	{
		echo "$src_pkg $v $flavour build_rev $build_rev"
		cat "$top/patches/series"
		while read -r p; do
			[ -n "$p" ] && cat "$top/patches/$p"
		done < "$top/patches/series"
		cat "${fragments[@]}"
	} | sha256sum | cut -c1-12
}

dir() { echo "$cache/kernel/$flavour-$(key)"; }
tree() { echo "$(dir)/linux"; }

need_built() {
	[ -f "$(dir)/built" ] ||
		die "no $flavour kernel built for this checkout (run: make kernel${FLAVOUR:+ FLAVOUR=$FLAVOUR})"
}

# Fail if an option of a fragment did not survive olddefconfig.
check_config() {
	local cfg=$1 frag line opt val bad=0

	for frag in "${fragments[@]}"; do
		while read -r line; do
			case "$line" in CONFIG_*=*) ;; *) continue ;; esac
			opt=${line%%=*}
			val=${line#*=}
			if [ "$val" = n ]; then
				grep -q "^$opt=" "$cfg" && { echo "$prog: $opt=n did not stick" >&2; bad=1; }
			else
				grep -qxF "$line" "$cfg" || {
					echo "$prog: $(basename "$frag"): $line did not stick (got: $(grep "^$opt=\|$opt is not set" "$cfg" || echo unset))" >&2
					bad=1
				}
			fi
		done < "$frag"
	done
	return $bad
}

build() {
	local d t k start log jobs

	ensure_source
	k=$(key)
	d=$(dir)
	t=$d/linux
	if [ -f "$d/built" ]; then
		echo "kernel: $(cat "$d/release") ($flavour, key $k) up to date: $t/arch/x86/boot/bzImage"
		return
	fi
	mkdir -p "$cache/kernel" "$cache/ccache"
	exec 9>"$cache/kernel/.lock-$flavour"
	flock 9
	start=$(date +%s)
	rm -rf "$d"
	mkdir -p "$d"
	log=$d/build.log
	echo "kernel: building $flavour kernel (key $k) in $d; log: $log"
	tar -C "$d" -xf "$src_tar"
	mv "$d/$src_pkg" "$t"
	while read -r p; do
		[ -n "$p" ] || continue
		patch -d "$t" -p1 -s --batch --forward < "$top/patches/$p" ||
			die "patches/$p does not apply to $src_pkg $(src_version)"
	done < "$top/patches/series"

	jobs=${JOBS:-$(($(nproc) + 1))}
	export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$t CCACHE_NOHASHDIR=1
	export KBUILD_BUILD_USER=deter KBUILD_BUILD_HOST=deter KBUILD_BUILD_TIMESTAMP="@0"
	ccache -M 8G >/dev/null
	(
		cd "$t"
		make -s allnoconfig
		printf 'CONFIG_LOCALVERSION="%s"\nCONFIG_LOCALVERSION_AUTO=n\n' "$localversion" > .deter.config
		scripts/kconfig/merge_config.sh -m .config "${fragments[@]}" .deter.config
		make olddefconfig
	) > "$log" 2>&1 || { tail -20 "$log" >&2; die "configuring failed, see $log"; }
	check_config "$t/.config" || die "config fragment not honoured, see $log"
	if ! make -C "$t" -j"$jobs" CC="ccache gcc" bzImage modules >> "$log" 2>&1; then
		grep -E "error|Error" "$log" | head -20 >&2
		die "kernel build failed, see $log"
	fi
	# Under make check, MAKEFLAGS has make print its directories; not here.
	make -s --no-print-directory -C "$t" kernelrelease > "$d/release"
	touch "$d/built"
	ln -sfn "$(basename "$d")" "$cache/kernel/$flavour"
	# Keep only this flavour's current tree.
	find "$cache/kernel" -maxdepth 1 -type d -name "$flavour-*" ! -path "$d" \
		-exec rm -rf {} +
	echo "kernel: $(cat "$d/release") ($flavour, key $k) built in $(($(date +%s) - start)) s: $t/arch/x86/boot/bzImage"
}

case "${1:-}" in
build) build ;;
tree) need_built; tree ;;
image) need_built; echo "$(tree)/arch/x86/boot/bzImage" ;;
release) need_built; cat "$(dir)/release" ;;
key) key ;;
*) echo "usage: $prog build|tree|image|release|key  (env: FLAVOUR, DETER_CACHE, JOBS)" >&2; exit 2 ;;
esac
