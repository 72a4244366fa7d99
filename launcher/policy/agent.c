/*
 * agent.c: the policy applied to the machine's processes.
 *
 * The kernel's process events (procevents.h) name each process that
 * starts, execs or changes its ids, and the agent reads those alone; where
 * it has no events, and every AGENT_CHECK_SCAN_S for what they may miss,
 * it lists /proc and reads each process's stat.  A process it has not
 * judged (a new PID, a PID reused: another start time, or an exec: its
 * code and stack moved, or its event) is judged now, and its rule
 * applied (agentjudge.c).  A process is judged once per program: a
 * refusal (a tracer, a seccomp filter) is not retried every second, only
 * after an exec or a reload.
 *
 * Never touched: ksm-run itself and kernel threads; PID 1 and the
 * agent's own cgroup only when a rule names them by themselves, not by a
 * pattern (match.h).  The agent's cgroup guards only when it is the
 * agent's: not the root, not PID 1's (sysvinit, runit, a supervisor in one
 * container: every process's), where it would keep every process out.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/files.h"
#include "common/ksmproc.h"
#include "common/msg.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "common/stopsig.h"
#include "common/text.h"
#include "policy/agent.h"
#include "policy/procevents.h"

static void log_error(void *ctx, const char *file, int line, const char *message)
{
	const struct agent *a = ctx;

	if (line)
		log_to(a->log, "policy: %s:%d: %s", printable(file), line, message);
	else
		log_to(a->log, "policy: %s: %s", printable(file), message);
}

/* Reads the policy into *P: 0 valid, 1 no file (an empty policy), -1 not valid. */
static int read_policy(struct agent *a, struct policy *p)
{
	int errors = policy_load(p, a->file, log_error, a);

	if (errors < 0) {
		memset(p, 0, sizeof *p);
		return 1;
	}
	if (errors) {
		policy_free(p);
		return -1;
	}
	return 0;
}

/*
 * With a policy, the kernel's process events tell the agent of new and
 * exec'd processes at once; without it, nothing is listened to (every
 * fork of the machine would be sent).  Where they cannot be had, /proc
 * is scanned every second instead, and the log says why.
 */
static void listen_while_active(struct agent *a)
{
	if (a->active && a->events < 0) {
		if ((a->events = procevents_open()) >= 0)
			log_to(a->log, "process events: from the kernel (proc connector): a new or exec'd process is "
			      "judged at once, and /proc scanned every %d s for what they might miss",
			      AGENT_CHECK_SCAN_S);
		else {
			snprintf(a->events_why, sizeof a->events_why, "%s%s", strerror(errno),
				 errno == EPERM || errno == ETIMEDOUT || errno == EPROTONOSUPPORT ?
				 "; they need CAP_NET_ADMIN in the host's namespaces" : "");
			log_to(a->log, "process events: not available (%s): new processes are found by a scan of "
			      "/proc every second", a->events_why);
		}
		a->changed = true;
	} else if (!a->active && a->events >= 0) {
		procevents_close(a->events);
		a->events = -1;
	}
}

/*
 * The agent's own cgroup, which guards its unit's other processes, unless
 * it is everyone's: the root (v1's memory controller groups nothing
 * there), or PID 1's, where no service manager gave the agent a cgroup.
 */
static void own_cgroup_read(struct agent *a)
{
	char text[8192], init[sizeof a->own_cgroup];

	if (read_text("/proc/self/cgroup", text, sizeof text) ||
	    proc_cgroup_parse(text, a->own_cgroup, sizeof a->own_cgroup) || !strcmp(a->own_cgroup, "/"))
		return;
	a->own_cgroup_everyones = read_text("/proc/1/cgroup", text, sizeof text) == 0 &&
				  proc_cgroup_parse(text, init, sizeof init) == 0 && !strcmp(init, a->own_cgroup);
	a->own_cgroup_known = !a->own_cgroup_everyones;
	if (a->own_cgroup_everyones && a->active)
		log_to(a->log, "the agent's cgroup %s is PID 1's, every process's (no service manager gave the agent "
		      "one of its own): it keeps no process out, only the agent itself is left alone",
		      printable(a->own_cgroup));
}

int agent_start(struct agent *a, const char *file, log_sink *log, const sigset_t *stops)
{
	int r;

	memset(a, 0, sizeof *a);
	a->events = -1;
	a->file = file ? file : POLICY_DEFAULT_FILE;
	a->log = log;
	a->stops = stops;
	a->started = time(NULL);
	if ((r = read_policy(a, &a->policy)) < 0)
		return -1;
	if (r > 0 && file) {
		log_to(a->log, "policy: %s: no such file", printable(file));
		return -1;
	}
	a->active = r == 0;
	a->changed = true;
	own_cgroup_read(a);
	if (a->active)
		log_to(a->log, "policy %s: %d rule%s; each process a rule names is enabled as it says, "
		      "and so is each that starts later", printable(a->file), a->policy.n,
		      a->policy.n == 1 ? "" : "s");
	else
		log_to(a->log, "no policy (%s does not exist): KSM is enabled in no process by the agent",
		      printable(a->file));
	listen_while_active(a);
	return 0;
}

void agent_reload(struct agent *a)
{
	struct policy fresh;
	int r = read_policy(a, &fresh);

	if (r > 0 && !a->active)
		return;         /* no policy before, and none now: nothing to say */
	if (r > 0) {
		policy_free(&a->policy);
		a->active = false;
		a->changed = true;
		log_to(a->log, "policy %s: no such file any more: the agent enables KSM in no new process "
		      "(those it enabled keep it)", printable(a->file));
		listen_while_active(a);
		return;
	}
	if (r < 0) {
		log_to(a->log, "policy %s: not valid, not taken: the policy of %d rule%s stays in force",
		      printable(a->file), a->policy.n, a->policy.n == 1 ? "" : "s");
		return;
	}
	policy_free(&a->policy);
	a->policy = fresh;
	a->active = true;
	/*
	 * Every process is judged again by the new rules (one that it no
	 * longer names is left as it is); until then what the agent enabled
	 * counts for the security domains, whatever order they come in.
	 */
	for (size_t i = 0; i < a->nprocs; i++)
		a->procs[i].stale = true;
	a->changed = true;
	log_to(a->log, "policy %s reloaded: %d rule%s", printable(a->file), a->policy.n, a->policy.n == 1 ? "" : "s");
	listen_while_active(a);
}

/* The process PID among the first N (sorted by PID), or NULL. */
static struct agent_proc *find(struct agent *a, size_t n, pid_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (a->procs[mid].pid == pid)
			return &a->procs[mid];
		if (a->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int by_pid(const void *x, const void *y)
{
	pid_t a = ((const struct agent_proc *)x)->pid, b = ((const struct agent_proc *)y)->pid;

	return (a > b) - (a < b);
}

/*
 * After an exec: a program in secure execution (setuid, setgid, file
 * capabilities) whose memory is still mergeable, because the kernel kept
 * the process-wide flag across the exec (6.7+), is said once, and shown
 * by --status; the library would have refused it, and an enabling rule
 * does (target.h).  A rule with action = off takes KSM out of it.
 */
static void look_at_exec(struct agent *a, struct agent_proc *p)
{
	pid_t tid = proc_live_thread(p->pid);
	struct ksmenable_stat st;

	if (!tid || proc_secure_exec(p->pid, tid) != 1 || ksm_proc_stat(p->pid, &st) ||
	    (ksm_proc_merge_any(p->pid, &st) != 1 && st.mergeable != 1))
		return;
	p->secure_mergeable = true;
	a->changed = true;
	log_to(a->log, "%d (%s): warning: runs a program in secure execution (setuid, setgid or file capabilities) and its "
	      "memory is mergeable: the kernel kept the process-wide flag across its exec; a rule with action = off "
	      "takes KSM out of it", (int)p->pid, printable(p->comm));
}

/*
 * Looks at process PID: judges it when it is not judged yet (new, a PID
 * reused, or an exec since), else marks its record seen.  A new record is
 * appended past the first KNOWN (sorted) ones.  False when the agent is
 * stopping: the rest waits.
 */
static bool visit(struct agent *a, size_t known, pid_t pid)
{
	struct proc_stat st;
	struct agent_proc *p = find(a, known, pid);
	bool execd;
	int tries;

	if (pid == getpid() || proc_stat_read(pid, &st) || (st.flags & PROC_PF_KTHREAD))
		return true;    /* ours, ended (its record is not seen: forgotten), or a kernel thread */
	if (p && !p->stale && p->start == st.starttime && p->start_code == st.start_code &&
	    p->start_stack == st.start_stack) {
		p->seen = true;
		return true;
	}
	if (stop_signal_pending(a->stops))
		return false;
	execd = p && p->start == st.starttime && (p->start_code != st.start_code || p->start_stack != st.start_stack);
	/* The same program tried again (a stuck one): how often it was, for the backoff. */
	tries = p && p->start == st.starttime && !execd && p->result == AGENT_WAITING ? p->tries : 0;
	if (!p) {
		a->procs = xgrow(a->procs, &a->cap, a->nprocs + 1, sizeof *a->procs);
		p = &a->procs[a->nprocs++];
	}
	*p = (struct agent_proc){ .pid = pid, .start = st.starttime, .start_code = st.start_code,
				  .start_stack = st.start_stack, .seen = true, .tries = tries };
	snprintf(p->comm, sizeof p->comm, "%s", st.comm);
	if (execd)
		look_at_exec(a, p);
	if (agent_watches_moves(a))
		p->cgroup_hash = agent_cgroup_hash(pid);
	if (!agent_judge(a, pid, st.comm, p)) {
		p->seen = false;        /* judged again next time */
		return false;
	}
	return true;
}

/* The records not seen are forgotten; the new join the sorted part.  After it every record is seen. */
static void forget_unseen(struct agent *a)
{
	size_t kept = 0;

	for (size_t i = 0; i < a->nprocs; i++)
		if (a->procs[i].seen)
			a->procs[kept++] = a->procs[i];
		else if (a->procs[i].rule[0])
			a->changed = true;      /* a process a rule held has ended */
	a->nprocs = kept;
	if (a->nprocs)
		qsort(a->procs, a->nprocs, sizeof *a->procs, by_pid);
}

void agent_scan(struct agent *a)
{
	struct dirent *e;
	size_t known;
	DIR *d;

	if (!a->active || !(d = opendir("/proc")))
		return;
	for (size_t i = 0; i < a->nprocs; i++)
		a->procs[i].seen = false;
	known = a->nprocs;
	while ((e = readdir(d))) {
		long long pid;

		if (parse_ll(e->d_name, 1, INT_MAX, &pid))
			continue;
		if (!visit(a, known, (pid_t)pid))
			break;
	}
	closedir(d);
	forget_unseen(a);
	a->events_lost = false;
	a->last_scan = now_s();
}

/* Each pid once, in order: a process looked at once per batch of events. */
static int by_value(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;

	return (a > b) - (a < b);
}

void agent_events(struct agent *a)
{
	struct procevent ev[512];
	pid_t *look = NULL;
	size_t nlook = 0, cap = 0, known = a->nprocs;
	int n;

	if (a->events < 0 || !a->active)
		return;
	/* Every record is seen here; an exit unsees it, a look decides again. */
	while ((n = procevents_read(a->events, ev, sizeof ev / sizeof ev[0])) > 0) {
		for (int i = 0; i < n; i++) {
			struct agent_proc *p = find(a, known, ev[i].pid);

			if (ev[i].kind == PROCEVENT_EXIT) {
				if (p)
					p->seen = false;
				continue;
			}
			/* An exec (the prctl is kept or lost by the kernel) or new ids: judged again. */
			if (p && ev[i].kind != PROCEVENT_NEW)
				p->stale = true;
			look = xgrow(look, &cap, nlook + 1, sizeof *look);
			look[nlook++] = ev[i].pid;
		}
		if ((size_t)n < sizeof ev / sizeof ev[0])
			break;
	}
	if (n < 0 && errno == ENOBUFS) {
		a->events_lost = true;          /* the next tick scans /proc */
	} else if (n < 0) {
		snprintf(a->events_why, sizeof a->events_why, "%s", strerror(errno));
		log_to(a->log, "process events: %s; new processes are found by a scan of /proc every second from now",
		      a->events_why);
		procevents_close(a->events);
		a->events = -1;
		a->changed = true;
	}
	if (nlook)
		qsort(look, nlook, sizeof *look, by_value);
	for (size_t i = 0; i < nlook; i++) {
		struct agent_proc *p;

		if (i && look[i] == look[i - 1])
			continue;
		if ((p = find(a, known, look[i])))
			p->seen = false;        /* seen again if it still lives */
		if (!visit(a, known, look[i]))
			break;
	}
	free(look);
	forget_unseen(a);
}

/*
 * The records to be judged again now: the targets found stuck whose next
 * try is due, and the processes moved to another cgroup; each as a new one.
 */
static void rejudge_due(struct agent *a)
{
	double now = now_s();
	size_t known = a->nprocs;

	for (size_t i = 0; i < known; i++)
		if (a->procs[i].result == AGENT_WAITING && a->procs[i].retry_at <= now)
			a->procs[i].stale = true;
	agent_mark_moved(a);
	for (size_t i = 0; i < known; i++)
		if (a->procs[i].stale && !visit(a, known, a->procs[i].pid))
			break;
	forget_unseen(a);
}

void agent_tick(struct agent *a)
{
	if (!a->active)
		return;
	if (a->events < 0 || a->events_lost || now_s() - a->last_scan >= AGENT_CHECK_SCAN_S)
		agent_scan(a);
	rejudge_due(a);
	agent_census_fresh(a, AGENT_CENSUS_S);
}

bool agent_listening(const struct agent *a)
{
	return a->active && a->events >= 0;
}

void agent_stop(struct agent *a)
{
	procevents_close(a->events);
	policy_free(&a->policy);
	free(a->procs);
	memset(a, 0, sizeof *a);
}
