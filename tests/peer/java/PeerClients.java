import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's Java clients against one broker (tests/peer/test_java_clients.py runs it against
 * Apache Kafka and against Seaway and compares). Each check prints one line,
 * {@code STEP <name> OK <detail>} or {@code STEP <name> FAIL <exception class>: <message>},
 * where detail holds only what both brokers must agree on (no ids, no times). A failing
 * step does not stop the steps after it.
 *
 * <p>Modes: {@code producer} (idempotent producer, read back), {@code group <assignor>}
 * (a two-member consumer group joining and leaving; assignor {@code range},
 * {@code cooperative-sticky}, or {@code consumer} for KIP-848's protocol), {@code admin}
 * (topics, partitions, configs, offsets, delete records, groups).
 */
public final class PeerClients {
    private static final Duration POLL = Duration.ofMillis(50);
    private static final long DEADLINE_MS = 30_000;

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String bootstrap = args[1];
        String prefix = args[2];
        switch (mode) {
            case "producer" -> producer(bootstrap, prefix);
            case "group" -> group(bootstrap, prefix, args[3]);
            case "admin" -> admin(bootstrap, prefix);
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    // --- plumbing --------------------------------------------------------------------

    /** Runs one check and prints its line; true when it passed. */
    private static boolean step(String name, Callable<String> body) {
        String line;
        boolean ok = false;
        try {
            line = "OK " + body.call();
            ok = true;
        } catch (Throwable t) {
            Throwable cause = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
            line = "FAIL " + cause.getClass().getSimpleName() + ": " + cause.getMessage();
        }
        System.out.println("STEP " + name + " " + line.replace('\n', ' '));
        System.out.flush();
        return ok;
    }

    private static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("default.api.timeout.ms", "20000");
        p.put("request.timeout.ms", "10000");
        return Admin.create(p);
    }

    private static KafkaProducer<String, String> producer(String bootstrap, boolean idempotent) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("enable.idempotence", Boolean.toString(idempotent));
        p.put("acks", "all");
        p.put("linger.ms", "5");
        p.put("max.in.flight.requests.per.connection", "5");
        p.put("request.timeout.ms", "10000");
        p.put("delivery.timeout.ms", "30000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private static KafkaConsumer<String, String> consumer(String bootstrap, String group, String assignor) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        if (group != null) {
            p.put("group.id", group);
            p.put("enable.auto.commit", "false");
            if (assignor.equals("consumer")) {
                p.put("group.protocol", "consumer");
            } else {
                p.put("group.protocol", "classic");
                p.put("session.timeout.ms", "6000");
                p.put("heartbeat.interval.ms", "500");
                p.put("partition.assignment.strategy", assignor.equals("range")
                        ? "org.apache.kafka.clients.consumer.RangeAssignor"
                        : "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
            }
        }
        p.put("auto.offset.reset", "earliest");
        p.put("default.api.timeout.ms", "20000");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    private static void createTopic(Admin admin, String name, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
    }

    private static void produce(String bootstrap, String topic, int count) throws Exception {
        try (KafkaProducer<String, String> producer = producer(bootstrap, true)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + (i % 30), "v" + i));
            }
            producer.flush();
        }
    }

    private static boolean timedOut(long start) {
        return System.currentTimeMillis() - start > DEADLINE_MS;
    }

    // --- producer ----------------------------------------------------------------------

    private static void producer(String bootstrap, String prefix) throws Exception {
        String topic = prefix + "-idempotent";
        int count = 3000;
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 3);
        }
        step("idempotent-send", () -> {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            try (KafkaProducer<String, String> producer = producer(bootstrap, true)) {
                for (int i = 0; i < count; i++) {
                    acks.add(producer.send(new ProducerRecord<>(topic, "k" + (i % 30), Integer.toString(i))));
                }
                producer.flush();
            }
            Map<Integer, List<Long>> offsets = new TreeMap<>();
            for (Future<RecordMetadata> ack : acks) {
                RecordMetadata m = ack.get();
                offsets.computeIfAbsent(m.partition(), k -> new ArrayList<>()).add(m.offset());
            }
            boolean contiguous = true;
            for (List<Long> list : offsets.values()) {
                for (int i = 0; i < list.size(); i++) {
                    contiguous &= list.get(i) == i;
                }
            }
            return "acked=" + acks.size() + " partitions=" + offsets.size() + " contiguous=" + contiguous;
        });
        step("idempotent-read-back", () -> {
            try (KafkaConsumer<String, String> consumer = consumer(bootstrap, null, null)) {
                List<TopicPartition> parts = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1),
                        new TopicPartition(topic, 2));
                consumer.assign(parts);
                consumer.seekToBeginning(parts);
                Set<String> seen = new HashSet<>();
                Map<String, Integer> lastPerKey = new HashMap<>();
                int records = 0;
                boolean ordered = true;
                long start = System.currentTimeMillis();
                while (records < count && !timedOut(start)) {
                    for (ConsumerRecord<String, String> r : consumer.poll(POLL)) {
                        records++;
                        seen.add(r.value());
                        int v = Integer.parseInt(r.value());
                        ordered &= lastPerKey.getOrDefault(r.key(), -1) < v;
                        lastPerKey.put(r.key(), v);
                    }
                }
                return "records=" + records + " distinct=" + seen.size() + " ordered-per-key=" + ordered;
            }
        });
    }

    // --- consumer group -----------------------------------------------------------------

    /** A consumer with its current assignment, tracked through the rebalance listener. */
    private static final class Member implements ConsumerRebalanceListener {
        final KafkaConsumer<String, String> consumer;
        final Set<TopicPartition> owned = new HashSet<>();

        Member(String bootstrap, String group, String assignor, String topic) {
            consumer = consumer(bootstrap, group, assignor);
            consumer.subscribe(List.of(topic), this);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            owned.removeAll(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            owned.addAll(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            owned.removeAll(partitions);
        }

        void poll(Set<String> seen) {
            ConsumerRecords<String, String> records = consumer.poll(POLL);
            for (ConsumerRecord<String, String> r : records) {
                seen.add(r.value());
            }
            if (!records.isEmpty()) {
                consumer.commitSync();
            }
        }
    }

    private static void group(String bootstrap, String prefix, String assignor) throws Exception {
        String topic = prefix + "-group-" + assignor;
        String group = topic + "-g";
        int count = 600;
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 6);
        }
        produce(bootstrap, topic, count);
        Set<String> seen = new HashSet<>();
        Member a = new Member(bootstrap, group, assignor, topic);
        Member[] b = new Member[1];
        boolean ok = step("first-member-gets-all", () -> {
            long start = System.currentTimeMillis();
            while (a.owned.size() != 6 && !timedOut(start)) {
                a.poll(seen);
            }
            return "a=" + a.owned.size();
        });
        ok = ok && step("second-member-rebalances", () -> {
            b[0] = new Member(bootstrap, group, assignor, topic);
            long start = System.currentTimeMillis();
            while (!(a.owned.size() == 3 && b[0].owned.size() == 3) && !timedOut(start)) {
                a.poll(seen);
                b[0].poll(seen);
            }
            Set<TopicPartition> union = new HashSet<>(a.owned);
            union.addAll(b[0].owned);
            return "a=" + a.owned.size() + " b=" + b[0].owned.size() + " union=" + union.size();
        });
        ok = ok && step("all-records-consumed", () -> {
            long start = System.currentTimeMillis();
            while (seen.size() < count && !timedOut(start)) {
                a.poll(seen);
                b[0].poll(seen);
            }
            return "distinct=" + seen.size();
        });
        ok = ok && step("leaving-member-rebalances", () -> {
            b[0].consumer.close();
            b[0] = null;
            long start = System.currentTimeMillis();
            while (a.owned.size() != 6 && !timedOut(start)) {
                a.poll(seen);
            }
            return "a=" + a.owned.size();
        });
        ok = ok && step("committed-offsets", () -> {
            Set<TopicPartition> parts = new HashSet<>();
            for (int p = 0; p < 6; p++) {
                parts.add(new TopicPartition(topic, p));
            }
            long sum = 0;
            for (OffsetAndMetadata o : a.consumer.committed(parts).values()) {
                sum += o == null ? 0 : o.offset();
            }
            return "sum=" + sum;
        });
        a.consumer.close();
        if (b[0] != null) {
            b[0].consumer.close();
        }
        ok = ok && step("group-empty-after-close", () -> {
            try (Admin admin = admin(bootstrap)) {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                return "state=" + d.groupState() + " members=" + d.members().size();
            }
        });
    }

    // --- admin -------------------------------------------------------------------------

    private static String config(Admin admin, ConfigResource resource, String key) throws Exception {
        Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
        ConfigEntry entry = config.get(key);
        return entry == null ? "absent" : entry.value() + "/" + entry.source();
    }

    private static String offsets(Admin admin, TopicPartition tp) throws Exception {
        ListOffsetsResult earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest()));
        ListOffsetsResult latest = admin.listOffsets(Map.of(tp, OffsetSpec.latest()));
        return "earliest=" + earliest.partitionResult(tp).get().offset() + " latest="
                + latest.partitionResult(tp).get().offset();
    }

    private static void admin(String bootstrap, String prefix) throws Exception {
        String topic = prefix + "-admin";
        String group = prefix + "-admin-g";
        TopicPartition p0 = new TopicPartition(topic, 0);
        ConfigResource topicResource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = admin(bootstrap)) {
            step("describe-cluster", () -> {
                var cluster = admin.describeCluster();
                return "nodes=" + cluster.nodes().get().size() + " controller-known="
                        + (cluster.controller().get() != null) + " cluster-id-set="
                        + !cluster.clusterId().get().isEmpty();
            });
            step("create-topic-validate-only", () -> {
                admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1)),
                        new CreateTopicsOptions().validateOnly(true)).all().get();
                return "listed=" + admin.listTopics().names().get().contains(topic);
            });
            step("create-topic", () -> {
                NewTopic t = new NewTopic(topic, 2, (short) 1).configs(Map.of("retention.ms", "123456789"));
                var result = admin.createTopics(List.of(t));
                result.all().get();
                return "partitions=" + result.numPartitions(topic).get() + " rf=" + result.replicationFactor(topic).get();
            });
            step("create-topic-again", () -> {
                admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
                return "created twice";
            });
            step("create-topic-bad-config", () -> {
                NewTopic t = new NewTopic(topic + "-bad", 1, (short) 1).configs(Map.of("cleanup.policy", "nope"));
                admin.createTopics(List.of(t)).all().get();
                return "created";
            });
            step("list-topics", () -> "listed=" + admin.listTopics().names().get().contains(topic));
            step("describe-topic", () -> {
                TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                return "partitions=" + d.partitions().size() + " leaders=" + d.partitions().stream()
                        .map(p -> p.leader().id()).collect(Collectors.toList()) + " internal=" + d.isInternal();
            });
            step("describe-unknown-topic", () -> {
                admin.describeTopics(List.of(topic + "-nope")).allTopicNames().get();
                return "found";
            });
            step("create-partitions", () -> {
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all().get();
                return "partitions=" + admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic)
                        .partitions().size();
            });
            step("create-partitions-decrease", () -> {
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all().get();
                return "decreased";
            });
            step("describe-topic-config", () -> "retention.ms=" + config(admin, topicResource, "retention.ms")
                    + " cleanup.policy=" + config(admin, topicResource, "cleanup.policy"));
            step("incremental-alter-config", () -> {
                admin.incrementalAlterConfigs(Map.of(topicResource, List.of(
                        new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact,delete"), AlterConfigOp.OpType.SET),
                        new AlterConfigOp(new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE))))
                        .all().get();
                return "retention.ms=" + config(admin, topicResource, "retention.ms") + " cleanup.policy="
                        + config(admin, topicResource, "cleanup.policy");
            });
            step("incremental-alter-config-invalid", () -> {
                admin.incrementalAlterConfigs(Map.of(topicResource, List.of(
                        new AlterConfigOp(new ConfigEntry("retention.ms", "soon"), AlterConfigOp.OpType.SET))))
                        .all().get();
                return "altered";
            });
            step("describe-broker-config", () -> {
                String id = Integer.toString(admin.describeCluster().nodes().get().iterator().next().id());
                ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, id);
                return "log.retention.hours=" + config(admin, broker, "log.retention.hours")
                        + " num.partitions-known=" + !config(admin, broker, "num.partitions").equals("absent");
            });
            produce(bootstrap, topic, 400);
            step("list-offsets", () -> offsets(admin, p0));
            // 7 records in one batch, timestamps base+0, 10, 20, 90, 30, 90, 40 (offsets 0..6)
            TopicPartition ts = new TopicPartition(topic + "-ts", 0);
            long base = 1_700_000_000_000L;
            step("list-offsets-max-timestamp", () -> {
                createTopic(admin, ts.topic(), 1);
                try (KafkaProducer<String, String> producer = producer(bootstrap, true)) {
                    for (long t : new long[] {base, base + 10, base + 20, base + 90, base + 30, base + 90, base + 40}) {
                        producer.send(new ProducerRecord<>(ts.topic(), 0, t, null, "t" + t));
                    }
                    producer.flush();
                }
                return "offset=" + admin.listOffsets(Map.of(ts, OffsetSpec.maxTimestamp())).partitionResult(ts).get()
                        .offset();
            });
            step("list-offsets-for-timestamp", () -> {
                String found = "at-base+25=" + admin.listOffsets(Map.of(ts, OffsetSpec.forTimestamp(base + 25)))
                        .partitionResult(ts).get().offset() + " after-last=" + admin.listOffsets(
                        Map.of(ts, OffsetSpec.forTimestamp(base + 91))).partitionResult(ts).get().offset();
                admin.deleteTopics(List.of(ts.topic())).all().get();
                return found;
            });
            step("delete-records", () -> {
                var result = admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(10)));
                long low = result.lowWatermarks().get(p0).get().lowWatermark();
                return "low-watermark=" + low + " " + offsets(admin, p0);
            });
            step("delete-records-beyond-end", () -> {
                admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(1_000_000))).all().get();
                return "deleted";
            });
            step("alter-group-offsets", () -> {
                admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(42, "meta"),
                        new TopicPartition(topic, 1), new OffsetAndMetadata(7))).all().get();
                return "ok";
            });
            step("list-groups", () -> {
                Collection<GroupListing> groups = admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get();
                for (GroupListing g : groups) {
                    if (g.groupId().equals(group)) {
                        return "listed type=" + g.type().map(Object::toString).orElse("?") + " protocol="
                                + g.protocol() + " state=" + g.groupState().map(Object::toString).orElse("?");
                    }
                }
                return "not listed";
            });
            step("describe-group", () -> {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                return "state=" + d.groupState() + " members=" + d.members().size() + " simple=" + d.isSimpleConsumerGroup();
            });
            step("list-group-offsets", () -> {
                Map<TopicPartition, OffsetAndMetadata> o = admin.listConsumerGroupOffsets(group)
                        .partitionsToOffsetAndMetadata().get();
                return new TreeMap<>(o.entrySet().stream().collect(Collectors.toMap(
                        e -> e.getKey().toString(), e -> e.getValue().offset() + ":" + e.getValue().metadata())))
                        .toString();
            });
            step("delete-group-offsets", () -> {
                admin.deleteConsumerGroupOffsets(group, Set.of(p0)).all().get();
                return "remaining=" + admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                        .keySet();
            });
            step("delete-group", () -> {
                admin.deleteConsumerGroups(List.of(group)).all().get();
                return "listed-after=" + admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get().stream()
                        .anyMatch(g -> g.groupId().equals(group));
            });
            step("delete-unknown-group", () -> {
                admin.deleteConsumerGroups(List.of(group + "-nope")).all().get();
                return "deleted";
            });
            step("delete-topic", () -> {
                admin.deleteTopics(List.of(topic)).all().get();
                long start = System.currentTimeMillis();
                while (admin.listTopics().names().get().contains(topic) && !timedOut(start)) {
                    Thread.sleep(100);
                }
                return "listed-after=" + admin.listTopics().names().get().contains(topic);
            });
        }
    }
}
