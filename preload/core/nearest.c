/* nearest.c - the edit distance behind "did you mean". */
#include <stdint.h>

#include "nearest.h"

#define NAME_MAX_LEN 64

size_t name_distance(const char *a, size_t la, const char *b, size_t lb)
{
	/* Three rows of the table: the one before last, the last, this one. */
	size_t rows[3][NAME_MAX_LEN + 1], *two_up, *up, *row;

	if (la >= NAME_MAX_LEN || lb >= NAME_MAX_LEN)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		rows[1][j] = j;
	two_up = rows[0];
	up = rows[1];
	row = rows[2];
	for (size_t i = 1; i <= la; i++) {
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t best = up[j - 1] + (a[i - 1] != b[j - 1]);

			if (up[j] + 1 < best)
				best = up[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    two_up[j - 2] + 1 < best)
				best = two_up[j - 2] + 1;
			row[j] = best;
		}
		size_t *oldest = two_up;
		two_up = up;
		up = row;
		row = oldest;
	}
	return up[lb];
}

int name_is_near(size_t d, size_t len)
{
	size_t limit = len / 3 + 1;

	return d <= (limit > 3 ? 3 : limit);
}
