/*
 * eintrcall: one blocking call of signal(7)'s list of those that fail with
 * EINTR after a stop even without a signal handler, for ksm-run --attach
 * to stop it in (tests/42-attach.bats).  It prints READY, blocks in the
 * call of MODE, which ends by itself after SECONDS (its timeout, or
 * another thread's doing), and checks that it ended so: not with EINTR,
 * not early, with the result expected.  "ok MODE" and exit 0, or a line
 * on stderr and exit 1.
 *
 * Usage: eintrcall MODE SECONDS
 * Modes: recv recvfrom recvmsg recvmmsg accept (SO_RCVTIMEO), send sendto
 * sendmsg sendmmsg connect (SO_SNDTIMEO), epoll_wait epoll_pwait
 * io_getevents semop semtimedop sigtimedwait sigwaitinfo msgrcv.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double seconds;
static int semid, msqid;

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "eintrcall: %s: %s\n", what, strerror(errno));
	exit(2);
}

static struct timespec span(void)
{
	return (struct timespec){ (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
}

/* A socket pair whose first end times out after SECONDS (SO_RCVTIMEO or SO_SNDTIMEO). */
static int timed_pair(int type, int opt, int sv[2])
{
	struct timeval tv = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e6) };

	if (socketpair(AF_UNIX, type, 0, sv) || setsockopt(sv[0], SOL_SOCKET, opt, &tv, sizeof tv))
		die("socketpair");
	return sv[0];
}

/* The send side full, so that the next send blocks. */
static int full_sender(int type, int sv[2])
{
	char buf[4096] = { 0 };
	int fd = timed_pair(type, SO_SNDTIMEO, sv), fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (send(fd, buf, type == SOCK_DGRAM ? 16 : sizeof buf, 0) > 0)
		;
	fcntl(fd, F_SETFL, fl);
	return fd;
}

static int tcp_listener(int backlog, struct sockaddr_in *sa)
{
	socklen_t len = sizeof *sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	*sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (fd < 0 || bind(fd, (struct sockaddr *)sa, sizeof *sa) || listen(fd, backlog) ||
	    getsockname(fd, (struct sockaddr *)sa, &len))
		die("listen");
	return fd;
}

/* After SECONDS, what ends the call of a mode that has no timeout of its own. */
static void *ender(void *arg)
{
	struct sembuf up = { 0, 1, 0 };
	struct { long type; char c; } m = { 1, 'x' };
	const char *mode = arg;
	struct timespec t = span();

	nanosleep(&t, NULL);
	if (!strcmp(mode, "semop"))
		semop(semid, &up, 1);
	else if (!strcmp(mode, "msgrcv"))
		msgsnd(msqid, &m, 1, 0);
	else
		syscall(SYS_tgkill, getpid(), getpid(), SIGUSR2);
	return NULL;
}

static void start_ender(const char *mode)
{
	pthread_t t;

	if (pthread_create(&t, NULL, ender, (void *)mode))
		die("pthread_create");
}

/* Sets up MODE and makes its call: its result, errno as the call left it. */
static long blocking_call(const char *mode)
{
	char buf[64];
	int sv[2], fd;
	struct iovec iov = { buf, sizeof buf };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct mmsghdr mm = { .msg_hdr = mh };
	struct timespec t = span();
	sigset_t usr2;

	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	if (!strncmp(mode, "recv", 4)) {
		fd = timed_pair(!strcmp(mode, "recvmmsg") ? SOCK_DGRAM : SOCK_STREAM, SO_RCVTIMEO, sv);
		puts("READY");
		if (!strcmp(mode, "recv"))
			return recv(fd, buf, sizeof buf, 0);
		if (!strcmp(mode, "recvfrom"))
			return recvfrom(fd, buf, sizeof buf, 0, NULL, NULL);
		if (!strcmp(mode, "recvmsg"))
			return recvmsg(fd, &mh, 0);
		return recvmmsg(fd, &mm, 1, 0, NULL);
	}
	if (!strncmp(mode, "send", 4)) {
		fd = full_sender(!strcmp(mode, "sendmmsg") ? SOCK_DGRAM : SOCK_STREAM, sv);
		puts("READY");
		if (!strcmp(mode, "send"))
			return send(fd, buf, sizeof buf, 0);
		if (!strcmp(mode, "sendto"))
			return sendto(fd, buf, sizeof buf, 0, NULL, 0);
		if (!strcmp(mode, "sendmsg"))
			return sendmsg(fd, &mh, 0);
		mm.msg_hdr.msg_iov->iov_len = 16;
		return sendmmsg(fd, &mm, 1, 0);
	}
	if (!strcmp(mode, "accept")) {
		struct timeval tv = { (time_t)seconds, 0 };
		struct sockaddr_in sa;

		fd = tcp_listener(1, &sa);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		puts("READY");
		return accept(fd, NULL, NULL);
	}
	if (!strcmp(mode, "connect")) {
		/* A listener whose queue is full drops new SYNs: a connect waits. */
		struct timeval tv = { (time_t)seconds, 0 };
		struct sockaddr_in sa;

		tcp_listener(0, &sa);
		for (int i = 0; i < 4; i++) {
			int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

			connect(c, (struct sockaddr *)&sa, sizeof sa);
		}
		usleep(100000);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		puts("READY");
		return connect(fd, (struct sockaddr *)&sa, sizeof sa);
	}
	if (!strncmp(mode, "epoll_", 6)) {
		struct epoll_event ev = { .events = EPOLLIN }, out;
		int ep = epoll_create1(0);

		if (pipe(sv) || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev))
			die("epoll");
		puts("READY");
		if (!strcmp(mode, "epoll_wait"))
			return epoll_wait(ep, &out, 1, (int)(seconds * 1000));
		return epoll_pwait(ep, &out, 1, (int)(seconds * 1000), NULL);
	}
	if (!strcmp(mode, "io_getevents")) {
		unsigned long ctx = 0;
		char events[4 * 32];

		if (syscall(SYS_io_setup, 1, &ctx))
			die("io_setup");
		puts("READY");
		return syscall(SYS_io_getevents, ctx, 1, 1, events, &t);
	}
	if (!strncmp(mode, "sem", 3)) {
		struct sembuf down = { 0, -1, 0 };

		if ((semid = semget(IPC_PRIVATE, 1, 0600)) < 0)
			die("semget");
		if (!strcmp(mode, "semop"))
			start_ender(mode);
		puts("READY");
		return strcmp(mode, "semop") ? semtimedop(semid, &down, 1, &t) : semop(semid, &down, 1);
	}
	if (!strcmp(mode, "msgrcv")) {
		struct { long type; char c[8]; } m;

		if ((msqid = msgget(IPC_PRIVATE, 0600)) < 0)
			die("msgget");
		start_ender(mode);
		puts("READY");
		return msgrcv(msqid, &m, sizeof m.c, 0, 0);
	}
	if (!strncmp(mode, "sig", 3)) {
		pthread_sigmask(SIG_BLOCK, &usr2, NULL);
		if (!strcmp(mode, "sigwaitinfo"))
			start_ender(mode);
		puts("READY");
		return strcmp(mode, "sigwaitinfo") ? sigtimedwait(&usr2, NULL, &t) : sigwaitinfo(&usr2, NULL);
	}
	fprintf(stderr, "eintrcall: unknown mode '%s'\n", mode);
	exit(2);
}

/* What each mode's call must end with: -1 and ERRNO, or a result >= 0. */
static int expected_errno(const char *mode)
{
	if (!strcmp(mode, "connect"))
		return EINPROGRESS;
	if (!strcmp(mode, "epoll_wait") || !strcmp(mode, "epoll_pwait") || !strcmp(mode, "io_getevents") ||
	    !strcmp(mode, "semop") || !strcmp(mode, "sigwaitinfo") || !strcmp(mode, "msgrcv"))
		return 0;
	return EAGAIN;
}

int main(int argc, char **argv)
{
	const char *mode;
	double t0, took;
	long r;
	int e, want;

	if (argc != 3 || (seconds = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: eintrcall MODE SECONDS\n");
		return 2;
	}
	mode = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	t0 = mono();
	r = blocking_call(mode);
	e = errno;
	took = mono() - t0;
	want = expected_errno(mode);
	if (r < 0 && e == EINTR) {
		fprintf(stderr, "eintrcall: %s: EINTR after %.3f s\n", mode, took);
		return 1;
	}
	/* connect: a connect run again after a stop says EALREADY: the attempt goes on, as EINPROGRESS says. */
	if (want ? !(r < 0 && (e == want || (want == EINPROGRESS && e == EALREADY))) : r < 0) {
		fprintf(stderr, "eintrcall: %s: returned %ld (%s) after %.3f s\n", mode, r, r < 0 ? strerror(e) : "-", took);
		return 1;
	}
	if (took < seconds - 0.05) {
		fprintf(stderr, "eintrcall: %s: ended early, after %.3f s of %.3f\n", mode, took, seconds);
		return 1;
	}
	printf("ok %s\n", mode);
	return 0;
}
