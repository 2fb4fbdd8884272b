#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian 12 packages deter's build, tests and demo need; a
# no-op when all are present. Runs apt-get update once, only if needed.
set -euo pipefail

pkgs=(
	# build
	build-essential pkg-config ccache clang
	libnetfilter-queue-dev libmnl-dev libzstd-dev zstd
	libtraceevent-dev libtracefs-dev
	# kernel build
	linux-source-6.12 bc bison flex libelf-dev libssl-dev cpio xz-utils
	kmod patch python3 perl
	# testbed VM and scenarios
	qemu-system-x86 iproute2 nftables ethtool procps tcpdump tshark
	iperf3 strace trace-cmd bats
	# the real-application scenarios (tests/apps), run in the VM only
	nginx-light wrk nghttp2-client curl memcached libmemcached-tools sockperf
	openssh-server openssh-client haproxy postgresql postgresql-contrib
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}; install them as root" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The servers among them are for the testbed VM: their packages must not
# start them on this host (policy-rc.d 101: no service starts).
prc=/usr/sbin/policy-rc.d
if [ ! -e "$prc" ]; then
	printf '#!/bin/sh\nexit 101\n' > "$prc"
	chmod 755 "$prc"
	trap 'rm -f "$prc"' EXIT
fi
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
