// SPDX-License-Identifier: GPL-2.0
/*
 * deter-vm-init: PID 1 of the deter testbed VM (see testbed/run).
 *
 * Mounts the basics with mount(2) (under TCG every exec over 9p costs
 * hundreds of milliseconds, so no mount(8)), runs the command the host
 * left in /run/deter-vm/cmd with bash, writes its exit status to
 * /run/deter-vm/status and reboots, which makes QEMU (-no-reboot) exit.
 * It never returns: PID 1 exiting panics the guest.
 *
 *   /run/deter-vm/mounts   "PATH TAG ro|rw" lines: extra 9p shares
 *   /run/deter-vm/cmd      bash script: cd, environment, the command
 *   /run/deter-vm/status   written here: the command's exit status
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CTL "/run/deter-vm"

static void init_warn(const char *what, const char *arg)
{
	fprintf(stderr, "deter-vm-init: %s %s: %s\n", what, arg, strerror(errno));
}

static void init_mount(const char *src, const char *dst, const char *type,
		       unsigned long flags, const char *data)
{
	mkdir(dst, 0755);
	if (mount(src, dst, type, flags, data) && errno != EBUSY)
		init_warn("mount", dst);
}

/* mkdir -p: shares may live below directories the guest's tmpfs hides. */
static void init_mkdir_p(const char *path)
{
	char buf[4096], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	mkdir(buf, 0755);
}

static void init_lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		return;
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
}

static void init_shares(void)
{
	char path[4096], tag[64], mode[8], opts[128];
	FILE *f = fopen(CTL "/mounts", "r");

	if (!f)
		return;
	while (fscanf(f, "%4095s %63s %7s", path, tag, mode) == 3) {
		snprintf(opts, sizeof(opts),
			 "trans=virtio,version=9p2000.L,msize=512000");
		init_mkdir_p(path);
		if (mount(tag, path, "9p", strcmp(mode, "ro") ? 0 : MS_RDONLY, opts))
			init_warn("mount share", path);
	}
	fclose(f);
}

static int init_run(void)
{
	int status, fd;
	pid_t pid, w;

	pid = fork();
	if (pid < 0)
		return 125;
	if (!pid) {
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 0);
			close(fd);
		}
		setsid();
		execl("/bin/bash", "bash", CTL "/cmd", (char *)NULL);
		init_warn("exec", "/bin/bash");
		_exit(127);
	}
	/* Reap everything; stop when the command itself has exited. */
	for (;;) {
		w = wait(&status);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return 125;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int main(void)
{
	FILE *f;
	int rc;

	init_mount("proc", "/proc", "proc", 0, NULL);
	init_mount("sysfs", "/sys", "sysfs", 0, NULL);
	init_mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	init_mount("devpts", "/dev/pts", "devpts", 0, "ptmxmode=0666");
	init_mount("tmpfs", "/dev/shm", "tmpfs", 0, NULL);
	init_mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777");
	init_mount("tmpfs", "/run", "tmpfs", 0, "mode=755");
	init_mount("tmpfs", "/var", "tmpfs", 0, "mode=755");
	mkdir("/var/tmp", 01777);
	mkdir("/var/lib", 0755);
	mkdir("/var/log", 0755);
	mkdir("/var/cache", 0755);
	mkdir("/run/lock", 01777);
	mkdir("/run/netns", 0755);
	if (symlink("/run", "/var/run"))
		init_warn("symlink", "/var/run");
	/* bash process substitution and friends need these. */
	symlink("/proc/self/fd", "/dev/fd");
	symlink("/proc/self/fd/0", "/dev/stdin");
	symlink("/proc/self/fd/1", "/dev/stdout");
	symlink("/proc/self/fd/2", "/dev/stderr");
	init_mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	init_mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	init_mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	init_mount("deterctl", CTL, "9p", 0, "trans=virtio,version=9p2000.L");
	init_shares();
	if (sethostname("deter-vm", 8))
		init_warn("sethostname", "deter-vm");
	init_lo_up();

	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
	setenv("HOME", "/tmp", 1);
	setenv("TERM", "dumb", 1);
	setenv("LANG", "C.UTF-8", 1);

	rc = init_run();
	f = fopen(CTL "/status", "w");
	if (f) {
		fprintf(f, "%d\n", rc);
		fclose(f);
	} else {
		init_warn("write", CTL "/status");
	}
	sync();
	reboot(RB_AUTOBOOT);
	for (;;)
		pause();
}
