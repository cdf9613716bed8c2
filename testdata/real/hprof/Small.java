import java.lang.ref.WeakReference;
import java.util.*;
public class Small {
    static class Node { Node next; int[] data; String name; Node(Node n, int i) { next = n; data = new int[i % 7]; name = "n" + i; } }
    static Object keep;
    public static void main(String[] a) throws Exception {
        Node head = null;
        for (int i = 0; i < 200; i++) head = new Node(head, i);
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < 50; i++) m.put("k" + i, new long[i % 5]);
        WeakReference<Node> weak = new WeakReference<>(new Node(null, 3));
        keep = new Object[] { head, m, weak, new char[] {'h', 'i'}, new double[] {1.5}, new boolean[] {true} };
        System.out.println("ready");
        Thread.sleep(30000);
    }
}
