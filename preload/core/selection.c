/* selection.c - the one rule that turns a selection into a region choice. */
#include "selection.h"

int region_selected(const struct selection *sel, const struct region *r)
{
	if (r->cls == REGION_SHARED || r->cls == REGION_SPECIAL)
		return 0;
	if (r->end - r->start < sel->min_size)
		return 0;
	/* Secret-like memory is on every deny list unless the allow list names it. */
	if (region_is_secret(r) && !selector_has(sel->allow, SEL_SECRET))
		return 0;
	return selector_matches(sel->allow, r) && !selector_matches(sel->deny, r);
}

void selection_of_config(struct selection *sel, const struct config *cfg)
{
	static const struct selector_list none;

	sel->allow = cfg->allow ? cfg->allow : &selector_all;
	sel->deny = cfg->deny ? cfg->deny : &none;
	sel->min_size = cfg->min_size;
}
