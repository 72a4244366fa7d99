/*
 * tiny - the "small program" whose start-up the benchmark times: it does
 * nothing, so what is measured is fork, exec, the dynamic loader, the
 * preloaded library's constructor and exit.
 */
int main(void)
{
	return 0;
}
