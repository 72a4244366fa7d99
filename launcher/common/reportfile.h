/*
 * reportfile.h - --report-file for the modes that print a report once
 * (--estimate, --combine): the text is gathered in memory and written
 * whole through file_replace(), or not at all.
 */
#ifndef KSMRUN_REPORTFILE_H
#define KSMRUN_REPORTFILE_H

#include <stdio.h>

struct report_text {
	char *text;
	size_t len;
	FILE *f;                        /* print the report here */
};

/* Opens R->f on memory (out of memory ends ksm-run). */
void report_text_open(struct report_text *r);

/* Writes what was printed to PATH; 0, or 125 after saying why it was refused. */
int report_text_write(struct report_text *r, const char *path);

#endif
