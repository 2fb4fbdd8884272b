/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for deter replay --vm (replay_vm.c): run the replay inside
 * the testbed VM, on the patched kernel, from a host that cannot.
 */
#ifndef _REPLAY_VM_H
#define _REPLAY_VM_H

struct replay_vm_opts {
	const char *logs[2];	/* the pair: first the log the user named */
	const char *outdir;	/* -o, created */
	const char *pcap;	/* --pcap prefix, or NULL */
	const char *trace;	/* --trace arguments, or NULL */
	const char *kernel;	/* --kernel image, or NULL: the runner's */
	unsigned long long repeat, timeout_s;
	int verbose;
};

int replay_vm_run(const struct replay_vm_opts *o, char **err);

#endif /* _REPLAY_VM_H */
