package org.mechspec.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes safetensors files: header JSON ({@code __metadata__} first, tensors in the given order, back to back),
 * padded with spaces to a multiple of 8 bytes, then the little-endian data. Same tensors → same bytes. Files are
 * written to a temporary name and renamed, so a crash never leaves half a checkpoint.
 */
public final class SafeTensorsWriter {
    public static final String INDEX_FILE = "model.safetensors.index.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A tensor to store under a name. */
    public record Named(String name, Tensor tensor) {
    }

    private SafeTensorsWriter() {
    }

    public static void write(Path file, List<Named> tensors, DType dtype, Map<String, String> metadata)
            throws IOException {
        ObjectNode header = JSON.createObjectNode();
        ObjectNode meta = header.putObject("__metadata__");
        metadata.forEach(meta::put);
        long offset = 0;
        for (Named t : tensors) {
            if (header.has(t.name())) {
                throw new IllegalArgumentException("tensor " + t.name() + " is listed twice");
            }
            ObjectNode e = header.putObject(t.name());
            e.put("dtype", dtype.name());
            for (int d : t.tensor().shape()) {
                e.withArray("shape").add(d);
            }
            if (t.tensor().shape().length == 0) {
                e.putArray("shape");
            }
            long end = offset + (long) t.tensor().size() * dtype.bytes();
            e.putArray("data_offsets").add(offset).add(end);
            offset = end;
        }
        byte[] json = JSON.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        int padded = (json.length + 7) / 8 * 8;
        if (8L + padded + offset > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(file + " would exceed 2 GB; write shards instead");
        }
        ByteBuffer out = ByteBuffer.allocate((int) (8 + padded + offset)).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(padded);
        out.put(json);
        for (int i = json.length; i < padded; i++) {
            out.put((byte) ' ');
        }
        for (Named t : tensors) {
            Tensor tensor = t.tensor();
            for (int i = 0; i < tensor.size(); i++) {
                double v = tensor.get(i);
                if (!Double.isFinite(v)) {
                    throw new IllegalArgumentException("tensor " + t.name() + " element " + i + " is " + v);
                }
                dtype.write(out, v);
            }
        }
        writeAtomically(file, out.array());
    }

    /**
     * Writes {@code model-0000i-of-0000n.safetensors} shards of at most {@code maxShardBytes} data bytes each
     * (a larger tensor gets a shard of its own) and the Hugging Face index {@value #INDEX_FILE}.
     */
    public static void writeSharded(Path dir, List<Named> tensors, DType dtype, long maxShardBytes,
                                    Map<String, String> metadata) throws IOException {
        List<List<Named>> shards = new ArrayList<>();
        List<Named> current = new ArrayList<>();
        long currentBytes = 0;
        long total = 0;
        for (Named t : tensors) {
            long bytes = (long) t.tensor().size() * dtype.bytes();
            if (!current.isEmpty() && currentBytes + bytes > maxShardBytes) {
                shards.add(current);
                current = new ArrayList<>();
                currentBytes = 0;
            }
            current.add(t);
            currentBytes += bytes;
            total += bytes;
        }
        if (!current.isEmpty()) {
            shards.add(current);
        }
        Files.createDirectories(dir);
        Map<String, String> weightMap = new LinkedHashMap<>();
        for (int s = 0; s < shards.size(); s++) {
            String name = String.format("model-%05d-of-%05d.safetensors", s + 1, shards.size());
            write(dir.resolve(name), shards.get(s), dtype, metadata);
            for (Named t : shards.get(s)) {
                weightMap.put(t.name(), name);
            }
        }
        ObjectNode index = JSON.createObjectNode();
        index.putObject("metadata").put("total_size", total);
        ObjectNode map = index.putObject("weight_map");
        weightMap.forEach(map::put);
        writeAtomically(dir.resolve(INDEX_FILE),
                (JSON.writerWithDefaultPrettyPrinter().writeValueAsString(index) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    static void writeAtomically(Path target, byte[] bytes) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
        try {
            Files.write(tmp, bytes);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
