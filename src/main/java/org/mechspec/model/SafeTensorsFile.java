package org.mechspec.model;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One safetensors file, validated when opened: an 8-byte little-endian header length that fits the file, a JSON
 * header whose every tensor has a known dtype, a non-negative shape and data_offsets whose span equals
 * elements × dtype size, and tensors that tile the data section exactly (no overlap, no hole, nothing missing
 * or trailing). Tensor bytes are read on demand.
 */
public final class SafeTensorsFile implements TensorSource {
    /** Larger headers are rejected as corrupt (the format's own limit is 100 MB). */
    static final long MAX_HEADER_BYTES = 100L << 20;
    /** Tensor bytes are decoded in pieces of this size (a multiple of every dtype's size). */
    static final int READ_CHUNK_BYTES = 1 << 20;
    private static final ObjectMapper JSON = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private record Entry(String name, DType dtype, int[] shape, long begin, long end) {
        long elements() {
            long n = 1;
            for (int d : shape) {
                n *= d;
            }
            return n;
        }
    }

    private final Path path;
    private final FileChannel channel;
    private final long dataStart;
    private final Map<String, Entry> entries;
    private final Map<String, String> metadata;

    private SafeTensorsFile(Path path, FileChannel channel, long dataStart, Map<String, Entry> entries,
                            Map<String, String> metadata) {
        this.path = path;
        this.channel = channel;
        this.dataStart = dataStart;
        this.entries = entries;
        this.metadata = metadata;
    }

    public static SafeTensorsFile open(Path path) {
        FileChannel channel;
        try {
            channel = FileChannel.open(path, StandardOpenOption.READ);
        } catch (IOException e) {
            throw new SafeTensorsException(path + ": cannot open (" + e + ")", e);
        }
        try {
            return parse(path, channel);
        } catch (RuntimeException e) {
            closeQuietly(channel);
            throw e;
        }
    }

    private static SafeTensorsFile parse(Path path, FileChannel channel) {
        long size = size(path, channel);
        if (size < 8) {
            throw new SafeTensorsException(path + ": truncated, " + size + " bytes hold no 8-byte header length");
        }
        ByteBuffer lengthBytes = readAt(path, channel, 0, 8);
        long headerLength = lengthBytes.order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (headerLength < 2 || headerLength > MAX_HEADER_BYTES) {
            throw new SafeTensorsException(path + ": corrupted header length " + Long.toUnsignedString(headerLength)
                    + " for a file of " + size + " bytes");
        }
        if (headerLength > size - 8) {
            throw new SafeTensorsException(path + ": truncated, the header needs " + headerLength
                    + " bytes after its length but the file holds only " + (size - 8));
        }
        byte[] headerBytes = new byte[(int) headerLength];
        readAt(path, channel, 8, (int) headerLength).get(headerBytes);
        JsonNode header;
        try {
            header = JSON.readTree(new String(headerBytes, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new SafeTensorsException(path + ": corrupted header, not JSON (" + e.getMessage().lines().findFirst().orElse("") + ")", e);
        }
        if (header == null || !header.isObject()) {
            throw new SafeTensorsException(path + ": corrupted header, not a JSON object");
        }
        long dataLength = size - 8 - headerLength;
        Map<String, String> metadata = new LinkedHashMap<>();
        Map<String, Entry> entries = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = header.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            if (field.getKey().equals("__metadata__")) {
                readMetadata(path, field.getValue(), metadata);
            } else {
                Entry e = entry(path, field.getKey(), field.getValue());
                entries.put(e.name(), e);
            }
        }
        checkTiling(path, entries, dataLength);
        List<Entry> ordered = new ArrayList<>(entries.values());
        ordered.sort(Comparator.comparingLong(Entry::begin));
        Map<String, Entry> byOffset = new LinkedHashMap<>();
        for (Entry e : ordered) {
            byOffset.put(e.name(), e);
        }
        return new SafeTensorsFile(path, channel, 8 + headerLength, byOffset, metadata);
    }

    private static Entry entry(Path path, String name, JsonNode node) {
        String where = path + ": tensor " + name;
        if (!node.isObject()) {
            throw new SafeTensorsException(where + ": header entry is not an object");
        }
        JsonNode dtypeNode = node.get("dtype");
        DType dtype = dtypeNode == null ? null : DType.parse(dtypeNode.asText());
        if (dtype == null) {
            throw new SafeTensorsException(where + ": unsupported or missing dtype " + dtypeNode
                    + " (supported: " + Arrays.toString(DType.values()) + ")");
        }
        JsonNode shapeNode = node.get("shape");
        if (shapeNode == null || !shapeNode.isArray()) {
            throw new SafeTensorsException(where + ": missing shape");
        }
        int[] shape = new int[shapeNode.size()];
        for (int i = 0; i < shape.length; i++) {
            JsonNode d = shapeNode.get(i);
            if (!d.isIntegralNumber() || !d.canConvertToInt() || d.intValue() < 0) {
                throw new SafeTensorsException(where + ": invalid dimension " + d + " in shape " + shapeNode);
            }
            shape[i] = d.intValue();
        }
        JsonNode offsets = node.get("data_offsets");
        if (offsets == null || !offsets.isArray() || offsets.size() != 2 || !offsets.get(0).isIntegralNumber()
                || !offsets.get(1).isIntegralNumber() || offsets.get(0).longValue() < 0
                || offsets.get(1).longValue() < offsets.get(0).longValue()) {
            throw new SafeTensorsException(where + ": invalid data_offsets " + offsets);
        }
        Entry e = new Entry(name, dtype, shape, offsets.get(0).longValue(), offsets.get(1).longValue());
        long elements = e.elements();
        if (elements > Integer.MAX_VALUE - 8 || elements * dtype.bytes() != e.end() - e.begin()) {
            throw new SafeTensorsException(where + ": shape " + Arrays.toString(shape) + " of " + dtype + " needs "
                    + elements * dtype.bytes() + " bytes, data_offsets span " + (e.end() - e.begin()));
        }
        return e;
    }

    private static void readMetadata(Path path, JsonNode node, Map<String, String> out) {
        if (!node.isObject()) {
            throw new SafeTensorsException(path + ": __metadata__ is not an object");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            if (!f.getValue().isTextual()) {
                throw new SafeTensorsException(path + ": __metadata__ value of " + f.getKey() + " is not a string");
            }
            out.put(f.getKey(), f.getValue().textValue());
        }
    }

    /** Tensors must cover [0, dataLength) back to back, as the format requires. */
    private static void checkTiling(Path path, Map<String, Entry> entries, long dataLength) {
        List<Entry> ordered = new ArrayList<>(entries.values());
        ordered.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
        long expected = 0;
        for (Entry e : ordered) {
            if (e.end() > dataLength) {
                throw new SafeTensorsException(path + ": tensor " + e.name() + " ends at data byte " + e.end()
                        + " but the file holds only " + dataLength + " data bytes (truncated)");
            }
            if (e.begin() != expected) {
                throw new SafeTensorsException(path + ": tensor " + e.name() + " starts at data byte " + e.begin()
                        + ", expected " + expected + (e.begin() < expected ? " (overlaps the previous tensor)"
                        : " (hole before it)"));
            }
            expected = e.end();
        }
        if (expected != dataLength) {
            throw new SafeTensorsException(path + ": " + (dataLength - expected)
                    + " data bytes after the last tensor belong to no tensor");
        }
    }

    public Path path() {
        return path;
    }

    public Map<String, String> metadata() {
        return Map.copyOf(metadata);
    }

    @Override
    public List<Path> files() {
        return List.of(path);
    }

    @Override
    public List<String> names() {
        return List.copyOf(entries.keySet());
    }

    @Override
    public int[] shape(String name) {
        return entry(name).shape().clone();
    }

    @Override
    public DType dtype(String name) {
        return entry(name).dtype();
    }

    /**
     * Streams the tensor's bytes through a buffer of at most {@link #READ_CHUNK_BYTES}, so loading a large
     * checkpoint never holds a tensor's raw bytes next to its widened values.
     */
    @Override
    public void readInto(String name, Tensor target) {
        Entry e = entry(name);
        if (!target.hasShape(e.shape())) {
            throw new SafeTensorsException(path + ": tensor " + name + " has shape " + Arrays.toString(e.shape())
                    + ", read into a tensor of shape " + Arrays.toString(target.shape()));
        }
        int elementBytes = e.dtype().bytes();
        int chunkElements = READ_CHUNK_BYTES / elementBytes;
        long position = dataStart + e.begin();
        for (int start = 0; start < target.size(); start += chunkElements) {
            int count = Math.min(chunkElements, target.size() - start);
            ByteBuffer bytes = readAt(path, channel, position + (long) start * elementBytes, count * elementBytes);
            bytes.order(ByteOrder.LITTLE_ENDIAN);
            for (int i = start; i < start + count; i++) {
                double v = e.dtype().read(bytes);
                if (!Double.isFinite(v)) {
                    throw new SafeTensorsException(path + ": tensor " + name + " element " + i + " is " + v);
                }
                target.set(i, v);
            }
        }
    }

    @Override
    public void close() {
        closeQuietly(channel);
    }

    private Entry entry(String name) {
        Entry e = entries.get(name);
        if (e == null) {
            throw new SafeTensorsException(path + ": no tensor named " + name);
        }
        return e;
    }

    private static long size(Path path, FileChannel channel) {
        try {
            return channel.size();
        } catch (IOException e) {
            throw new UncheckedIOException(path + ": cannot read size", e);
        }
    }

    private static ByteBuffer readAt(Path path, FileChannel channel, long position, int length) {
        ByteBuffer b = ByteBuffer.allocate(length);
        try {
            while (b.hasRemaining()) {
                int n = channel.read(b, position + b.position());
                if (n < 0) {
                    throw new SafeTensorsException(path + ": truncated at byte " + (position + b.position()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(path + ": read failed", e);
        }
        b.flip();
        return b;
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing a read-only channel: nothing to recover
        }
    }
}
