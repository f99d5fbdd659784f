// Apache Kafka's own mirror client classes, run against Seaway's bytes and clusters, for
// test_mirror_kafka_client.py: java -cp 'tests/peer/kafka/lib/*' KafkaMirrorClient.java < commands
// (one JVM start for all of them). One command a line, one answer line each:
//
//   decode <kind> <key hex> <value hex>   Kafka's deserializeRecord of our bytes, printed field by field
//   encode <kind> <fields...>             Kafka's serialization, printed as "<key hex> <value hex>"
//   client <bootstrap> <remote alias> <group>
//                                         RemoteClusterUtils against a cluster: translateOffsets,
//                                         upstreamClusters, heartbeatTopics, checkpointTopics, replicationHops
//                                         (one line, fields separated by " | ")

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.Checkpoint;
import org.apache.kafka.connect.mirror.Heartbeat;
import org.apache.kafka.connect.mirror.OffsetSync;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

public class KafkaMirrorClient {
    static final HexFormat HEX = HexFormat.of();

    static ConsumerRecord<byte[], byte[]> record(String key, String value) {
        return new ConsumerRecord<>("t", 0, 0L, HEX.parseHex(key), HEX.parseHex(value));
    }

    static String bytes(Object target, String method) throws Exception {
        Method m = target.getClass().getDeclaredMethod(method);
        m.setAccessible(true);  // package-private in Kafka
        return HEX.formatHex((byte[]) m.invoke(target));
    }

    public static void main(String[] ignored) throws Exception {
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (!line.isBlank()) {
                run(line.trim().split(" "));
            }
        }
    }

    static void run(String[] args) throws Exception {
        switch (args[0]) {
            case "decode" -> {
                ConsumerRecord<byte[], byte[]> r = record(args[2], args[3]);
                switch (args[1]) {
                    case "offset-sync" -> {
                        OffsetSync s = OffsetSync.deserializeRecord(r);
                        System.out.println(s.topicPartition().topic() + " " + s.topicPartition().partition() + " "
                                + s.upstreamOffset() + " " + s.downstreamOffset());
                    }
                    case "checkpoint" -> {
                        Checkpoint c = Checkpoint.deserializeRecord(r);
                        System.out.println(c.consumerGroupId() + " " + c.topicPartition().topic() + " "
                                + c.topicPartition().partition() + " " + c.upstreamOffset() + " "
                                + c.downstreamOffset() + " " + c.metadata());
                    }
                    default -> {
                        Heartbeat h = Heartbeat.deserializeRecord(r);
                        System.out.println(h.sourceClusterAlias() + " " + h.targetClusterAlias() + " " + h.timestamp());
                    }
                }
            }
            case "encode" -> {
                Object o = switch (args[1]) {
                    case "offset-sync" -> new OffsetSync(new TopicPartition(args[2], Integer.parseInt(args[3])),
                            Long.parseLong(args[4]), Long.parseLong(args[5]));
                    case "checkpoint" -> new Checkpoint(args[2], new TopicPartition(args[3], Integer.parseInt(args[4])),
                            Long.parseLong(args[5]), Long.parseLong(args[6]), args[7]);
                    default -> new Heartbeat(args[2], args[3], Long.parseLong(args[4]));
                };
                System.out.println(bytes(o, "recordKey") + " " + bytes(o, "recordValue"));
            }
            default -> {
                Map<String, Object> props = new HashMap<>();
                props.put("bootstrap.servers", args[1]);
                Map<TopicPartition, OffsetAndMetadata> offsets =
                        RemoteClusterUtils.translateOffsets(props, args[2], args[3], Duration.ofSeconds(20));
                Map<String, Long> sorted = new TreeMap<>();
                offsets.forEach((tp, om) -> sorted.put(tp.topic() + "-" + tp.partition(), om.offset()));
                System.out.println(sorted + " | "
                        + String.join(",", new java.util.TreeSet<>(RemoteClusterUtils.upstreamClusters(props))) + " | "
                        + String.join(",", new java.util.TreeSet<>(RemoteClusterUtils.heartbeatTopics(props))) + " | "
                        + String.join(",", new java.util.TreeSet<>(RemoteClusterUtils.checkpointTopics(props))) + " | "
                        + RemoteClusterUtils.replicationHops(props, args[2]));
            }
        }
    }
}
