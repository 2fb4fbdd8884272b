// SPDX-License-Identifier: GPL-2.0
/*
 * deter replay --vm: the same replay, inside the testbed VM.
 *
 * A host that cannot load deter.ko (or runs a kernel without deter's
 * hooks) replays in the VM that boots the patched kernel with the host's
 * root filesystem (testbed/run). The logs are checked on the host first;
 * the guest then runs
 *
 *   insmod deter.ko && deter replay LOG LOG -o OUTDIR [--pcap P] ...
 *
 * with OUTDIR (and the capture's directory) shared writable and the logs'
 * directories shared read-only where the guest's tmpfs would hide them.
 * The runner and deter.ko are found next to this binary (BIN/../testbed/run,
 * BIN/../deter.ko), or in DETER_VM_RUN and DETER_KO.
 */
#include "replay_vm.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deter_err.h"
#include "rec_log.h"

/* The guest's shell: load deter.ko, replay, unload; 125: no deter.ko. */
static const char replay_vm_sh[] =
	"ko=$1 deter=$2; shift 2; "
	"insmod \"$ko\" || { echo \"deter replay: --vm: cannot load $ko in the VM\" >&2; exit 125; }; "
	"\"$deter\" \"$@\"; rc=$?; rmmod deter 2>/dev/null; exit $rc";

#define REPLAY_VM_ARGS 64

struct replay_vm_argv {
	char *v[REPLAY_VM_ARGS];
	int n;
	int nomem;
};

static void replay_vm_add(struct replay_vm_argv *a, const char *s)
{
	char *d = s ? strdup(s) : NULL;

	if (!d || a->n >= REPLAY_VM_ARGS - 1) {
		free(d);
		a->nomem = 1;
		return;
	}
	a->v[a->n++] = d;
}

static void replay_vm_free(struct replay_vm_argv *a)
{
	int i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
}

/* The directory of @path (a file, or a capture prefix), absolute. */
static int replay_vm_dir_of(const char *path, char *dir, char **err)
{
	char tmp[PATH_MAX], *slash;

	snprintf(tmp, sizeof(tmp), "%s", path);
	slash = strrchr(tmp, '/');
	if (!slash)
		snprintf(tmp, sizeof(tmp), ".");
	else if (slash == tmp)
		tmp[1] = '\0';
	else
		*slash = '\0';
	if (!realpath(tmp, dir))
		return rec_err(err, "%s: %s", tmp, strerror(errno));
	return 0;
}

/* @path absolute, its directory resolved: @path need not exist. */
static int replay_vm_abs(const char *path, char *abs, char **err)
{
	char dir[PATH_MAX];
	const char *base = strrchr(path, '/');

	if (replay_vm_dir_of(path, dir, err))
		return -1;
	base = base ? base + 1 : path;
	if (snprintf(abs, PATH_MAX, "%s/%s", strcmp(dir, "/") ? dir : "", base) >= PATH_MAX)
		return rec_err(err, "%s: path too long", path);
	return 0;
}

static int replay_vm_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* Hidden in the guest (its tmpfs) unless shared. */
static int replay_vm_hidden(const char *path)
{
	return replay_vm_under(path, "/tmp") || replay_vm_under(path, "/run") ||
	       replay_vm_under(path, "/var");
}

/* BIN/../@rel, from this binary's own path. */
static int replay_vm_beside(const char *rel, char *out)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');		/* .../bin/deter */
	if (!slash)
		return -1;
	*slash = '\0';
	slash = strrchr(exe, '/');		/* .../bin */
	if (!slash)
		return -1;
	*slash = '\0';
	return snprintf(out, PATH_MAX, "%s/%s", exe, rel) >= PATH_MAX ? -1 : 0;
}

static int replay_vm_find(const char *env, const char *rel, int mode,
			  const char *what, char *out, char **err)
{
	const char *e = getenv(env);

	if (e && *e)
		snprintf(out, PATH_MAX, "%s", e);
	else if (replay_vm_beside(rel, out))
		return rec_err(err, "--vm: cannot find %s (set %s)", what, env);
	if (access(out, mode))
		return rec_err(err, "--vm: %s: %s (%s; set %s)", out, strerror(errno),
			       what, env);
	return 0;
}

/**
 * replay_vm_run() - run a replay inside the testbed VM
 * @o: what to replay and how
 * @err: the error message
 *
 * Return: the guest replay's exit status (0 verified, 1 not), or -1 with
 * *err set when the VM could not run it.
 */
int replay_vm_run(const struct replay_vm_opts *o, char **err)
{
	char run[PATH_MAX], ko[PATH_MAX], self[PATH_MAX], outdir[PATH_MAX];
	char pcap[PATH_MAX], pdir[PATH_MAX], ldir[PATH_MAX], num[32];
	char logs[2][PATH_MAX], shared[2][PATH_MAX];
	struct replay_vm_argv a = { .n = 0 };
	unsigned long long vm_s;
	int i, j, nshared = 0, status, ret = -1;
	pid_t pid;

	if (replay_vm_find("DETER_VM_RUN", "testbed/run", X_OK,
			   "the testbed VM runner, testbed/run of deter's source tree",
			   run, err) ||
	    replay_vm_find("DETER_KO", "deter.ko", R_OK, "deter.ko built for the VM's kernel",
			   ko, err))
		return -1;
	if (o->kernel && access(o->kernel, R_OK))
		return rec_err(err, "--kernel %s: %s", o->kernel, strerror(errno));
	if (!realpath("/proc/self/exe", self))
		return rec_err(err, "--vm: /proc/self/exe: %s", strerror(errno));
	if (!realpath(o->outdir, outdir))
		return rec_err(err, "%s: %s", o->outdir, strerror(errno));
	for (i = 0; i < 2; i++)
		if (!realpath(o->logs[i], logs[i]))
			return rec_err(err, "%s: %s", o->logs[i], strerror(errno));
	if (o->pcap && (replay_vm_abs(o->pcap, pcap, err) ||
			replay_vm_dir_of(o->pcap, pdir, err)))
		return -1;

	/* A replay is bounded by its own stuck timeout; the VM generously. */
	vm_s = 300 + o->repeat * (600 + 4 * o->timeout_s);
	if (vm_s > 86400)
		vm_s = 86400;
	snprintf(num, sizeof(num), "%llu", vm_s);
	replay_vm_add(&a, run);
	replay_vm_add(&a, "--timeout");
	replay_vm_add(&a, num);
	if (o->kernel) {
		replay_vm_add(&a, "--kernel");
		replay_vm_add(&a, o->kernel);
	}
	/* The logs' directories, where the guest's tmpfs hides them. */
	for (i = 0; i < 2; i++) {
		if (replay_vm_dir_of(logs[i], ldir, err))
			goto out;
		if (!replay_vm_hidden(ldir) || replay_vm_under(ldir, outdir) ||
		    (o->pcap && replay_vm_under(ldir, pdir)))
			continue;
		for (j = 0; j < nshared && strcmp(shared[j], ldir); j++)
			;
		if (j < nshared)
			continue;
		snprintf(shared[nshared++], PATH_MAX, "%s", ldir);
		replay_vm_add(&a, "--ro");
		replay_vm_add(&a, ldir);
	}
	replay_vm_add(&a, "--rw");
	replay_vm_add(&a, outdir);
	if (o->pcap && !replay_vm_under(pdir, outdir)) {
		replay_vm_add(&a, "--rw");
		replay_vm_add(&a, pdir);
	}
	replay_vm_add(&a, "--");
	replay_vm_add(&a, "/bin/sh");
	replay_vm_add(&a, "-c");
	replay_vm_add(&a, replay_vm_sh);
	replay_vm_add(&a, "deter-vm");
	replay_vm_add(&a, ko);
	replay_vm_add(&a, self);
	replay_vm_add(&a, "replay");
	replay_vm_add(&a, logs[0]);
	replay_vm_add(&a, logs[1]);
	replay_vm_add(&a, "-o");
	replay_vm_add(&a, outdir);
	if (o->pcap) {
		replay_vm_add(&a, "--pcap");
		replay_vm_add(&a, pcap);
	}
	if (o->trace) {
		replay_vm_add(&a, "--trace");
		replay_vm_add(&a, o->trace);
	}
	snprintf(num, sizeof(num), "%llu", o->repeat);
	replay_vm_add(&a, "--repeat");
	replay_vm_add(&a, num);
	snprintf(num, sizeof(num), "%llu", o->timeout_s);
	replay_vm_add(&a, "--timeout");
	replay_vm_add(&a, num);
	if (o->verbose)
		replay_vm_add(&a, "--verbose");
	if (a.nomem) {
		rec_err(err, "out of memory");
		goto out;
	}
	a.v[a.n] = NULL;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rec_err(err, "--vm: fork: %s", strerror(errno));
		goto out;
	}
	if (!pid) {
		execv(run, a.v);
		deter_warn("--vm: %s: %s", run, strerror(errno));
		_exit(125);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			rec_err(err, "--vm: waitpid: %s", strerror(errno));
			goto out;
		}
	if (!WIFEXITED(status))
		rec_err(err, "--vm: %s: killed by signal %d", run, WTERMSIG(status));
	else if (WEXITSTATUS(status) == 124)
		rec_err(err, "--vm: the testbed VM did not finish within %llu s", vm_s);
	else if (WEXITSTATUS(status) == 125)
		rec_err(err, "--vm: the testbed VM did not run the replay (boot failed, or see above)");
	else if (WEXITSTATUS(status) == 2)
		rec_err(err, "--vm: %s refused its arguments (see above)", run);
	else
		ret = WEXITSTATUS(status);
out:
	replay_vm_free(&a);
	return ret;
}
