/*
 * selection.h - which regions a configuration makes mergeable: an allow
 * list, a deny list and a minimum size, judged the same way by the library
 * (madvise mode, the API) and by ksm-run (--estimate, --profile).
 */
#ifndef KSMENABLE_SELECTION_H
#define KSMENABLE_SELECTION_H

#include "config.h"
#include "maps.h"
#include "selector.h"

struct selection {
	const struct selector_list *allow, *deny;
	unsigned long min_size;
};

/*
 * Does SEL choose region R?  Shared and special regions never; secret-like
 * ones (region_is_secret, from R's VmFlags) only when the allow list names
 * "secret".
 */
int region_selected(const struct selection *sel, const struct region *r);

/*
 * The selection of the settings CFG (config_load): their lists, or all
 * regions allowed and none denied where a list is not given.  The one
 * place of those defaults, for the library, --attach and --estimate.
 */
void selection_of_config(struct selection *sel, const struct config *cfg);

#endif
