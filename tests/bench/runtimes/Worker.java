// tests/bench/runtimes/Worker.java - a JVM worker for host-bench's mixed host
// (run by the source launcher, java Worker.java): a map of 200,000 entries
// and an array of a million doubles, as a service builds at start; then it
// waits to be killed.  Every worker builds the same.
import java.util.HashMap;

public class Worker {
	public static void main(String[] args) throws InterruptedException {
		HashMap<Integer, String> m = new HashMap<>();
		for (int i = 0; i < 200000; i++)
			m.put(i, "entry-" + i);
		double[] a = new double[1000000];
		for (int i = 0; i < a.length; i++)
			a[i] = i;
		Thread.sleep(Long.MAX_VALUE);
		System.out.println(m.size() + a.length);
	}
}
