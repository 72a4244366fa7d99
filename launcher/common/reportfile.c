/* reportfile.c - a report printed to memory, then written to its file whole. */
#include <stdlib.h>

#include "common/files.h"
#include "common/msg.h"
#include "common/reportfile.h"

void report_text_open(struct report_text *r)
{
	r->text = NULL;
	r->len = 0;
	if (!(r->f = open_memstream(&r->text, &r->len)))
		die_oom();
}

int report_text_write(struct report_text *r, const char *path)
{
	int err;

	if (fclose(r->f))
		die_oom();
	err = file_replace(path, r->text, r->len, file_mode_umask(0644));
	free(r->text);
	r->text = NULL;
	if (err)
		msg("--report-file=%s: refused: %s", path, file_strerror(-err));
	return err ? 125 : 0;
}
