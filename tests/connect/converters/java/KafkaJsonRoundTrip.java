import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.json.JsonConverter;

/**
 * Apache Kafka's own JsonConverter, for tests/connect/converters/test_converters_json_kafka.py.
 *
 * <p>Prints {@code JAVA <feature version>}, then reads lines {@code <config>\t<base64 bytes>}
 * ({@code config} is {@code key=value} pairs joined by commas, one converter per distinct
 * config) and answers each with {@code OK <base64>} (the bytes {@code fromConnectData} writes
 * for what {@code toConnectData} read), {@code NULL} or {@code ERR <class>: <message>}.
 */
public class KafkaJsonRoundTrip {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "UTF-8");
        out.println("JAVA " + Runtime.version().feature());
        Map<String, JsonConverter> converters = new HashMap<>();
        Base64.Decoder decoder = Base64.getDecoder();
        Base64.Encoder encoder = Base64.getEncoder();
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            JsonConverter converter = converters.get(parts[0]);
            if (converter == null) {
                Map<String, String> config = new HashMap<>();
                for (String pair : parts[0].split(",")) {
                    String[] kv = pair.split("=", 2);
                    config.put(kv[0], kv[1]);
                }
                converter = new JsonConverter();
                converter.configure(config, false);
                converters.put(parts[0], converter);
            }
            try {
                SchemaAndValue read = converter.toConnectData("t", decoder.decode(parts[1]));
                byte[] written = converter.fromConnectData("t", read.schema(), read.value());
                out.println(written == null ? "NULL" : "OK " + encoder.encodeToString(written));
            } catch (Exception e) {
                out.println("ERR " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
            }
        }
        out.flush();
    }
}
