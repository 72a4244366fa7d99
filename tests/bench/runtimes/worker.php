<?php
// tests/bench/runtimes/worker.php - a PHP worker for host-bench's mixed host:
// an array of 200,000 entries, as a PHP-FPM worker's caches hold, then it
// waits to be killed.  Every worker builds the same.
$m = [];
for ($i = 0; $i < 200000; $i++)
	$m[$i] = ["entry-" . $i, $i * 1.5];
while (true)
	sleep(3600);
