import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.TreeMap;

/** Loads each file named on the command line with java.util.Properties and prints what it read.
 * One line per file: "ERROR" when load refuses it, else key=value pairs sorted by key, every string as
 * the hex of its UTF-16 code units, so nothing in the output is ambiguous. */
public class PropertiesDump {
    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();
        for (String name : args) {
            Properties props = new Properties();
            try (Reader reader = new InputStreamReader(Files.newInputStream(Path.of(name)), StandardCharsets.UTF_8)) {
                props.load(reader);
            } catch (IllegalArgumentException e) {
                out.append("ERROR\n");
                continue;
            }
            TreeMap<String, String> sorted = new TreeMap<>();
            for (String key : props.stringPropertyNames()) sorted.put(key, props.getProperty(key));
            StringBuilder line = new StringBuilder("OK");
            sorted.forEach((k, v) -> line.append(' ').append(hex(k)).append('=').append(hex(v)));
            out.append(line).append('\n');
        }
        System.out.print(out);
    }

    private static String hex(String s) {
        StringBuilder b = new StringBuilder("x");
        for (int i = 0; i < s.length(); i++) b.append(String.format("%04x", (int) s.charAt(i)));
        return b.toString();
    }
}
