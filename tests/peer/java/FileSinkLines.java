import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.file.FileStreamSinkTask;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;

/**
 * Kafka's own FileStreamSinkTask writing the values Kafka's JsonConverter makes of JSON documents.
 *
 * <p>Arguments: an input file (one JSON document per line), {@code schemas.enable} (true or false)
 * and the output file. Each line goes through {@code JsonConverter.toConnectData} and the record
 * through {@code FileStreamSinkTask.put}, so the output file holds exactly what a Kafka Connect
 * worker's FileStreamSink writes for those records.
 */
public class FileSinkLines {
    public static void main(String[] args) throws Exception {
        JsonConverter converter = new JsonConverter();
        converter.configure(Map.of("schemas.enable", args[1]), false);
        List<SinkRecord> records = new ArrayList<>();
        long offset = 0;
        for (String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8)) {
            SchemaAndValue value = converter.toConnectData("t", line.getBytes(StandardCharsets.UTF_8));
            records.add(new SinkRecord("t", 0, null, null, value.schema(), value.value(), offset++));
        }
        FileStreamSinkTask task = new FileStreamSinkTask();
        task.start(Map.of("file", args[2]));
        task.put(records);
        task.flush(Collections.emptyMap());
        task.stop();
    }
}
