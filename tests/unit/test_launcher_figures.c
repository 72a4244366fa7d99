/*
 * Unit tests of the host-wide figures, without root: the group of a
 * process from /proc/PID/cgroup, the exposition format's label escaping,
 * the metrics text of a made-up machine, a machine of 20,000 cgroups, and
 * the --metrics-file path check.
 * Run from the top of the tree.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "host/groups.h"
#include "host/hoststate.h"
#include "host/metrics.h"
#include "ksmenable.h"
#include "unit.h"

static int group_of(const char *text, char *out, size_t len)
{
	char buf[1024];

	snprintf(buf, sizeof buf, "%s", text);
	return cgroup_of_text(buf, out, len);
}

static void test_cgroup_lines(void)
{
	char g[256];

	/* v2 only: the one line. */
	CHECK(group_of("0::/system.slice/nginx.service\n", g, sizeof g) == 0 && !strcmp(g, "/system.slice/nginx.service"));
	/* hybrid: the memory controller's line wins over the v2 one, wherever it is. */
	CHECK(group_of("9:name=systemd:/user.slice\n4:memory:/web/a\n1:cpu:/\n0::/user.slice/x.scope\n", g, sizeof g) == 0 &&
	      !strcmp(g, "/web/a"));
	CHECK(group_of("0::/u\n4:memory:/web/b", g, sizeof g) == 0 && !strcmp(g, "/web/b"));
	/* memory among several controllers of one hierarchy, but not a name that only contains it. */
	CHECK(group_of("3:cpu,memory:/m\n0::/v2\n", g, sizeof g) == 0 && !strcmp(g, "/m"));
	CHECK(group_of("3:memoryx:/m\n0::/v2\n", g, sizeof g) == 0 && !strcmp(g, "/v2"));
	CHECK(group_of("3:name=memory:/m\n0::/v2\n", g, sizeof g) == 0 && !strcmp(g, "/v2"));
	/* v1 without memory and no v2 line: no group. */
	CHECK(group_of("1:cpu:/a\n2:pids:/b\n", g, sizeof g) == -1);
	CHECK(group_of("", g, sizeof g) == -1);
	CHECK(group_of("garbage\n0:/x\n", g, sizeof g) == -1);
	/* The root, and paths with colons in them (after the second colon, all is path). */
	CHECK(group_of("0::/\n", g, sizeof g) == 0 && !strcmp(g, "/"));
	CHECK(group_of("0::/a:b\n", g, sizeof g) == 0 && !strcmp(g, "/a:b"));
	/* Too long for OUT: none rather than cut. */
	CHECK(group_of("0::/abcdefgh\n", g, 5) == -1);
}

static const char *label_of(const char *s)
{
	static char out[256];
	FILE *f = fmemopen(out, sizeof out, "w");

	metrics_label(f, s);
	fclose(f);
	return out;
}

static void test_labels(void)
{
	CHECK(!strcmp(label_of("/system.slice/x.service"), "\"/system.slice/x.service\""));
	CHECK(!strcmp(label_of("a\\b"), "\"a\\\\b\""));
	CHECK(!strcmp(label_of("say \"hi\""), "\"say \\\"hi\\\"\""));
	CHECK(!strcmp(label_of("two\nlines"), "\"two\\nlines\""));
	CHECK(!strcmp(label_of(""), "\"\""));
	CHECK(!strcmp(label_of("caf\xc3\xa9"), "\"caf\xc3\xa9\""));
	/* Not UTF-8 (the format's label values are): U+FFFD. */
	CHECK(!strcmp(label_of("a\xff" "b"), "\"a\xef\xbf\xbd" "b\""));
}

static void put(struct ksm_files *kf, const char *name, const char *value, bool writable)
{
	struct ksm_file *f = &kf->f[kf->n++];

	snprintf(f->name, sizeof f->name, "%s", name);
	snprintf(f->value, sizeof f->value, "%s", value);
	f->writable = writable;
}

#define CONTAINER_ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define POD_PATH "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3f2a0c1d_5b6e_4a4b_9c9d_" \
	"0123456789ab.slice/cri-containerd-" CONTAINER_ID ".scope"

static void test_format(void)
{
	static struct ksm_files kf;
	struct sys_sample now = { .ksmd_cpu = 12.5 };
	struct cgroup_group g[3] = {
		{ .path = (char *)"/system.slice/a\"b.service", .procs = 3, .merged_pages = 10, .profit_bytes = 4096,
		  .candidate_pages = 20 },
		{ .path = (char *)"/web", .procs = 1, .merged_pages = 0, .profit_bytes = -64, .candidate_pages = 5 },
		{ .path = (char *)POD_PATH, .procs = 2, .merged_pages = 1, .profit_bytes = 0, .candidate_pages = 1 },
	};
	struct cgroup_groups gs = { .g = g, .n = 3 };

	/* What groups_collect finds the pod's cgroup to name, kubelet having made it. */
	cg_name_parse(POD_PATH, &g[2].names);
	struct metrics_rule rules[2] = { { "php", 3, 0, 1, 0, 0, 25 }, { "off\"x", 0, 2, 0, 1, 0, 0 } };
	struct metrics_agent agent = { .rules = rules, .n = 2, .domains = 3, .unaccepted_domains = 1 };
	/* A program's name as a hostile user could make it: quote, backslash, newline, not UTF-8. */
	struct metrics_command cmd = { .command = "a\"b\\c\nd\xff", .file = "web.prom", .processes = 2, .merged_pages = 3,
				       .profit_bytes = 100, .peak_merged_pages = 7, .saved_bytes = 8192,
				       .peak_saved_bytes = 12288 };
	struct metrics_source src = { .files = &kf, .now = &now, .phase = HELD_STEADY, .decisions = 4,
				      .groups = &gs, .command = &cmd, .agent = &agent, .page = 4096 };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	put(&kf, "advisor_mode", "scan-time", true);
	put(&kf, "full_scans", "17", false);
	put(&kf, "general_profit", "-128", false);
	put(&kf, "pages_sharing", "5", false);
	put(&kf, "pages_to_scan", "100", true);
	put(&kf, "some_new_counter", "9", false);
	put(&kf, "some_new_word", "fast", true);
	f = open_memstream(&text, &len);
	metrics_format(f, &src);
	fclose(f);
	CHECK(strstr(text, "# TYPE ksmenable_general_profit_bytes gauge\nksmenable_general_profit_bytes -128\n"));
	CHECK(strstr(text, "# HELP ksmenable_full_scans_total "));
	CHECK(strstr(text, "# TYPE ksmenable_full_scans_total counter\nksmenable_full_scans_total 17\n"));
	CHECK(strstr(text, "ksmenable_pages_sharing 5\n"));
	CHECK(strstr(text, "ksmenable_knob{name=\"pages_to_scan\"} 100\n"));
	CHECK(!strstr(text, "ksmenable_knob{name=\"advisor_mode\"}"));
	CHECK(strstr(text, "ksmenable_advisor_mode_info{mode=\"scan-time\"} 1\n"));
	CHECK(strstr(text, "ksmenable_sysfs_value{file=\"some_new_counter\"} 9\n"));
	CHECK(strstr(text, "ksmenable_knob_info{name=\"some_new_word\",value=\"fast\"} 1\n"));
	CHECK(strstr(text, "# TYPE ksmenable_ksmd_cpu_seconds_total counter\nksmenable_ksmd_cpu_seconds_total 12.50\n"));
	CHECK(strstr(text, "ksmenable_tuner_phase{phase=\"boost\"} 0\nksmenable_tuner_phase{phase=\"steady\"} 1\n"));
	CHECK(strstr(text, "ksmenable_tuner_decisions_total 4\n"));
	CHECK(strstr(text, "ksmenable_cgroup_merged_bytes{cgroup=\"/system.slice/a\\\"b.service\"} 40960\n"));
	CHECK(strstr(text, "ksmenable_cgroup_profit_bytes{cgroup=\"/web\"} -64\n"));
	CHECK(strstr(text, "ksmenable_cgroup_candidate_bytes{cgroup=\"/web\"} 20480\n"));
	/* Every group written: none left out. */
	CHECK(strstr(text, "\nksmenable_cgroups_left_out 0\n"));
	CHECK(strstr(text, "\nksmenable_cgroups_left_out_candidate_bytes 0\n"));
	/* A pod's container: its IDs as labels, for a join with kube-state-metrics. */
	CHECK(strstr(text, "ksmenable_cgroup_merged_bytes{cgroup=\"" POD_PATH "\",container_id=\"" CONTAINER_ID
		     "\",pod_uid=\"3f2a0c1d-5b6e-4a4b-9c9d-0123456789ab\"} 4096\n"));
	/* The agent's rules. */
	CHECK(strstr(text, "ksmenable_rule_processes{result=\"enabled\",rule=\"php\"} 3\n"));
	CHECK(strstr(text, "ksmenable_rule_processes{result=\"refused\",rule=\"php\"} 1\n"));
	CHECK(strstr(text, "ksmenable_rule_processes{result=\"disabled\",rule=\"off\\\"x\"} 2\n"));
	CHECK(strstr(text, "ksmenable_rule_processes{result=\"left_alone\",rule=\"off\\\"x\"} 1\n"));
	CHECK(strstr(text, "ksmenable_rule_merged_bytes{rule=\"php\"} 102400\n"));
	CHECK(strstr(text, "# TYPE ksmenable_security_domains gauge\nksmenable_security_domains 3\n"));
	CHECK(strstr(text, "# TYPE ksmenable_security_domains_unaccepted gauge\nksmenable_security_domains_unaccepted 1\n"));
#define LABELS "{command=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\",file=\"web.prom\"}"
	CHECK(strstr(text, "ksmenable_command_processes" LABELS " 2\n"));
	CHECK(strstr(text, "ksmenable_command_merged_bytes" LABELS " 12288\n"));
	CHECK(strstr(text, "ksmenable_command_peak_merged_bytes" LABELS " 28672\n"));
	CHECK(strstr(text, "ksmenable_command_saved_bytes" LABELS " 8192\n"));
	CHECK(strstr(text, "ksmenable_command_peak_saved_bytes" LABELS " 12288\n"));
	/* Every family has its HELP and TYPE once; every sample line belongs to the family just announced. */
	{
		char fam[128] = "";
		int bad = 0;
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
			if (!strncmp(line, "# TYPE ", 7))
				sscanf(line + 7, "%127s", fam);
			else if (line[0] != '#' && (strncmp(line, fam, strlen(fam)) ||
						    (line[strlen(fam)] != ' ' && line[strlen(fam)] != '{')))
				bad++;
		}
		CHECK(bad == 0);
	}
	free(text);
	/* Another writer has the machine's series: only the command's, and "saved" only when counted. */
	src.command_only = true;
	cmd.saved_bytes = cmd.peak_saved_bytes = LLONG_MIN;
	text = NULL;
	f = open_memstream(&text, &len);
	metrics_format(f, &src);
	fclose(f);
	CHECK(strstr(text, "ksmenable_command_processes" LABELS " 2\n"));
	CHECK(!strstr(text, "_saved_bytes"));
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		CHECK(!strncmp(line, "ksmenable_command_", 18) || !strncmp(line, "# HELP ksmenable_command_", 25) ||
		      !strncmp(line, "# TYPE ksmenable_command_", 25));
	free(text);
	src.command_only = false;
	/* The daemon: no command families; unknown phase: every phase 0. */
	src.command = NULL;
	src.phase = -1;
	src.groups = NULL;
	text = NULL;
	f = open_memstream(&text, &len);
	metrics_format(f, &src);
	fclose(f);
	CHECK(!strstr(text, "ksmenable_command_"));
	CHECK(!strstr(text, "ksmenable_cgroup_"));
	CHECK(!strstr(text, "} 1\nksmenable_tuner_decisions") && strstr(text, "ksmenable_tuner_phase{phase=\"none\"} 0\n"));
	free(text);
}

/* The lines of TEXT that begin with PREFIX and end with END. */
static int lines_of(const char *text, const char *prefix, const char *end)
{
	int n = 0;

	for (const char *p = text, *nl; *p; p = nl + 1) {
		size_t len = (nl = strchrnul(p, '\n')) - p;

		n += len >= strlen(prefix) + strlen(end) && !strncmp(p, prefix, strlen(prefix)) &&
		     !strncmp(nl - strlen(end), end, strlen(end));
		if (!*nl)
			break;
	}
	return n;
}

/*
 * 20,000 groups fed as groups_collect feeds them: group i has i % 7 + 1
 * processes, the first two in a run (the last group found), the others
 * after every group was made (the index); i % 3 == 0 merged 2 pages a
 * process; candidate memory 1 page a process, none where i % 11 == 0, so
 * that those of them with nothing merged are left out.  Then the metrics
 * file and the JSON list GROUPS_LISTED_MAX, the most merged, and count the rest.
 */
#define MANY 20000
static void test_many_groups(void)
{
	static struct ksm_files kf;
	static unsigned char seen[MANY];
	struct cgroup_groups gs;
	struct metrics_source src = { .files = &kf, .phase = -1, .groups = &gs, .page = 4096 };
	long long merged = 0, candidate = 0, listed_candidate = 0;
	int processes = 0, kept = 0, bad = 0, unsorted = 0, objects = 0;
	char path[64], want[96], *text = NULL;
	struct jsonw w;
	size_t len = 0;
	FILE *f;

	groups_init(&gs);
	for (int pass = 0; pass < 7; pass++)
		for (int i = 0; i < MANY; i++) {
			struct ksmenable_stat st = { .rmap_items = -1, .merging_pages = i % 3 ? 0 : 2,
						     .process_profit = 4096, .merge_any = 1, .mergeable = 1 };
			int procs = i % 7 + 1, runs = pass == 0 ? (procs > 1 ? 2 : 1) : pass >= 2 && pass < procs;

			snprintf(path, sizeof path, "/kubepods.slice/t-%d.scope", i);
			for (int r = 0; r < runs; r++) {
				groups_add(&gs, path, &st, i % 11 ? 1 : 0);
				processes++;
				merged += st.merging_pages;
				candidate += i % 11 ? 1 : 0;
			}
		}
	CHECK(gs.n == MANY && gs.nslots >= 2 * MANY && gs.dropped == 0 && gs.processes == processes);
	groups_end(&gs);
	for (int i = 0; i < MANY; i++)
		kept += i % 3 == 0 || i % 11;
	CHECK(gs.n == kept && !gs.slot && gs.processes == processes);
	CHECK(gs.merged_pages == merged && gs.profit_bytes == 4096LL * processes);
	/* Each group once, with its own processes and figures; the most merged first. */
	for (int k = 0; k < gs.n; k++) {
		const struct cgroup_group *g = &gs.g[k];
		int i = -1;

		if (sscanf(g->path, "/kubepods.slice/t-%d.scope", &i) != 1 || i < 0 || i >= MANY || seen[i]++) {
			bad++;
			continue;
		}
		bad += g->procs != i % 7 + 1 || g->merged_pages != (i % 3 ? 0 : 2LL * g->procs) ||
		       g->candidate_pages != (i % 11 ? g->procs : 0) || g->profit_bytes != 4096LL * g->procs;
		unsorted += k && g->merged_pages > gs.g[k - 1].merged_pages;
		if (k < GROUPS_LISTED_MAX)
			listed_candidate += g->candidate_pages;
	}
	CHECK(bad == 0 && unsorted == 0);
	CHECK(groups_listed(&gs) == GROUPS_LISTED_MAX);

	f = open_memstream(&text, &len);
	metrics_format(f, &src);
	fclose(f);
	CHECK(lines_of(text, "ksmenable_cgroup_processes{", "") == GROUPS_LISTED_MAX);
	CHECK(lines_of(text, "ksmenable_cgroup_profit_bytes{", "") == GROUPS_LISTED_MAX);
	CHECK(lines_of(text, "ksmenable_cgroup_candidate_bytes{", "") == GROUPS_LISTED_MAX);
	/* The most merged: 953 groups have 7 processes of 2 merged pages, 14 pages. */
	CHECK(lines_of(text, "ksmenable_cgroup_merged_bytes{", "} 57344") == GROUPS_LISTED_MAX);
	CHECK(lines_of(text, "ksmenable_cgroup_merged_bytes{", "") == GROUPS_LISTED_MAX);
	snprintf(want, sizeof want, "\nksmenable_cgroups_left_out %d\n", kept - GROUPS_LISTED_MAX);
	CHECK(strstr(text, want));
	snprintf(want, sizeof want, "\nksmenable_cgroups_left_out_candidate_bytes %lld\n",
		 (candidate - listed_candidate) * 4096);
	CHECK(strstr(text, want));
	free(text);

	text = NULL;
	f = open_memstream(&text, &len);
	jw_start(&w, f);
	jw_object(&w, NULL);
	groups_json(&w, &gs);
	jw_object(&w, "not_collected");
	groups_json(&w, NULL);
	jw_finish(&w);
	fclose(f);
	CHECK(!strncmp(text, "{\"groups\":[{\"cgroup\":", 21));
	for (const char *p = text; (p = strstr(p, "{\"cgroup\":")); p++)
		objects++;
	CHECK(objects == GROUPS_LISTED_MAX);
	snprintf(want, sizeof want, "],\"groups_left_out\":%d,", kept - GROUPS_LISTED_MAX);
	CHECK(strstr(text, want));
	CHECK(strstr(text, "\"not_collected\":{\"groups\":null,\"groups_left_out\":null}}"));
	free(text);
	groups_free(&gs);
}

static void test_paths(void)
{
	char why[PATH_MAX + 128];

	CHECK(metrics_check_path("/tmp/x.prom", why, sizeof why) == 0);
	CHECK(metrics_check_path("x.prom", why, sizeof why) == 0);
	CHECK(metrics_check_path("/nonexistent-ksmenable/x.prom", why, sizeof why) == -1 &&
	      strstr(why, "its directory '/nonexistent-ksmenable' does not exist"));
	CHECK(metrics_check_path("/tmp", why, sizeof why) == -1 && strstr(why, "is a directory"));
	CHECK(metrics_check_path("/tmp/", why, sizeof why) == -1 && strstr(why, "not a file name"));
	CHECK(metrics_check_path("/etc/passwd/x", why, sizeof why) == -1 && strstr(why, "does not exist"));
}

UNIT_MAIN(UNIT_TEST(test_cgroup_lines), UNIT_TEST(test_labels), UNIT_TEST(test_format),
	  UNIT_TEST(test_many_groups), UNIT_TEST(test_paths))
