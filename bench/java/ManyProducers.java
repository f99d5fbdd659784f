import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Many small producers and their end-to-end latency (bench/peer_kafka.py, case "many producers").
 *
 * <p>{@code ManyProducers <bootstrap> <topic> <producers> <records/s each> <seconds> <record bytes> [k=v ...]}:
 * starts one consumer reading the topic from its end, then {@code producers} KafkaProducers
 * (each its own connection, the Java client's defaults: acks=all, idempotence, linger.ms 5,
 * batch.size 16 KiB), each on its own thread sending at a fixed rate, on schedule (a late
 * thread catches up, it never skips): every 5 ms (the producer's linger.ms) the records of
 * those 5 ms, so the 50 threads do not each wake a thousand times a second, which on two
 * cores would cost more than the brokers under test. Every value starts with
 * the send time ({@code System.nanoTime()}, the same clock the consumer reads in this JVM).
 * The {@code k=v} pairs go to producers and consumer alike (the TLS settings).
 *
 * <p>Prints one line per figure: {@code sent}, {@code acked}, {@code received} (counts),
 * {@code e2e_ms p50 p99 p999 max} (send to the consumer's poll returning it) and
 * {@code ack_ms p50 p99 p999 max} (send to the producer's acknowledgement callback), each
 * over the records sent after the first second (warm-up) and before the last.
 */
public final class ManyProducers {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int producers = Integer.parseInt(args[2]);
        int rate = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        int size = Integer.parseInt(args[5]);
        Properties extra = new Properties();
        for (int i = 6; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            extra.put(kv[0], kv[1]);
        }
        long warmup = 1_000_000_000L;
        long[] e2e = new long[producers * rate * (seconds + 2)];
        AtomicLong received = new AtomicLong();
        long[] acks = new long[e2e.length];
        AtomicLong acked = new AtomicLong();
        AtomicLong sent = new AtomicLong();
        long[] started = new long[1];
        int[] e2eCount = new int[1];

        Properties cprops = new Properties();
        cprops.putAll(extra);
        cprops.put("bootstrap.servers", bootstrap);
        cprops.put("key.deserializer", ByteArrayDeserializer.class.getName());
        cprops.put("value.deserializer", ByteArrayDeserializer.class.getName());
        cprops.put("enable.auto.commit", "false");
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cprops);
        List<TopicPartition> parts = new ArrayList<>();
        for (PartitionInfo p : consumer.partitionsFor(topic)) {
            parts.add(new TopicPartition(topic, p.partition()));
        }
        consumer.assign(parts);
        consumer.seekToEnd(parts);
        for (TopicPartition tp : parts) {
            consumer.position(tp); // resolve the end offsets now, before anything is sent
        }
        final long end = System.nanoTime() + (seconds + 1) * 1_000_000_000L;
        Thread reader = new Thread(() -> {
            int n = 0;
            while (System.nanoTime() < end + 60_000_000_000L) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(50));
                long now = System.nanoTime();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    long t = bytesToLong(r.value());
                    if (t - started[0] >= warmup && t - started[0] < (seconds - 1) * 1_000_000_000L + warmup && n < e2e.length) {
                        e2e[n++] = now - t;
                    }
                    received.incrementAndGet();
                }
                if (System.nanoTime() > end && received.get() >= sent.get()) {
                    break;
                }
            }
            e2eCount[0] = n; // read after join
        });

        Properties pprops = new Properties();
        pprops.putAll(extra);
        pprops.put("bootstrap.servers", bootstrap);
        pprops.put("key.serializer", ByteArraySerializer.class.getName());
        pprops.put("value.serializer", ByteArraySerializer.class.getName());
        List<KafkaProducer<byte[], byte[]>> clients = new ArrayList<>();
        for (int i = 0; i < producers; i++) {
            KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(pprops);
            p.partitionsFor(topic); // metadata and connection before the clock starts
            clients.add(p);
        }
        started[0] = System.nanoTime();
        reader.start();
        AtomicLong ackCount = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        long tick = 5_000_000L;
        int perTick = Math.max(1, (int) (rate * tick / 1_000_000_000L));
        for (int i = 0; i < producers; i++) {
            KafkaProducer<byte[], byte[]> p = clients.get(i);
            long offset = tick * i / producers; // spread the producers over one tick
            Thread t = new Thread(() -> {
                long next = started[0] + offset;
                long stop = started[0] + seconds * 1_000_000_000L;
                while (next < stop) {
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                        continue;
                    }
                    for (int j = 0; j < perTick; j++) {
                        byte[] value = new byte[size];
                        long t0 = System.nanoTime();
                        longToBytes(t0, value);
                        sent.incrementAndGet();
                        p.send(new ProducerRecord<>(topic, value), (md, ex) -> {
                            long done = System.nanoTime();
                            if (ex == null) {
                                acked.incrementAndGet();
                                if (t0 - started[0] >= warmup
                                        && t0 - started[0] < (seconds - 1) * 1_000_000_000L + warmup) {
                                    int k = (int) ackCount.getAndIncrement();
                                    if (k < acks.length) {
                                        acks[k] = done - t0;
                                    }
                                }
                            }
                        });
                    }
                    next += tick;
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        for (KafkaProducer<byte[], byte[]> p : clients) {
            p.flush();
        }
        reader.join();
        for (KafkaProducer<byte[], byte[]> p : clients) {
            p.close();
        }
        consumer.close();
        int n = e2eCount[0];
        System.out.println("sent " + sent.get());
        System.out.println("acked " + acked.get());
        System.out.println("received " + received.get());
        System.out.println("e2e_ms " + percentiles(e2e, n));
        System.out.println("ack_ms " + percentiles(acks, (int) Math.min(ackCount.get(), acks.length)));
    }

    private static String percentiles(long[] values, int n) {
        if (n <= 0) {
            return "none";
        }
        long[] v = Arrays.copyOf(values, n);
        Arrays.sort(v);
        return String.format("%.3f %.3f %.3f %.3f", v[n / 2] / 1e6, v[(int) (n * 0.99)] / 1e6,
                v[Math.min(n - 1, (int) (n * 0.999))] / 1e6, v[n - 1] / 1e6);
    }

    private static void longToBytes(long v, byte[] b) {
        for (int i = 7; i >= 0; i--) {
            b[i] = (byte) v;
            v >>= 8;
        }
    }

    private static long bytesToLong(byte[] b) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[i] & 0xff);
        }
        return v;
    }
}
