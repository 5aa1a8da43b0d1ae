package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.compute.HalfFloat;

/** safetensors round trips and the rejection of bad files, each with a message naming the cause. */
@Tag("model")
class SafeTensorsTest {
    @TempDir
    Path dir;

    /** Writes named tensors to one safetensors file: the writer under test, or a broken one. */
    interface Writer {
        void write(Path file, List<SafeTensorsWriter.Named> tensors) throws IOException;
    }

    /** The writer as checkpoints use it, in F32. */
    static final Writer F32 =
            (file, tensors) -> SafeTensorsWriter.write(file, tensors, DType.F32, Map.of("format", "pt"));

    /** True when a save through {@code writer} → load round trip gives every tensor bit-identically. */
    static boolean roundTripsBitIdentically(Qwen2Model model, Path dir, Writer writer) throws IOException {
        Files.createDirectories(dir);
        model.config().write(dir.resolve(Checkpoint.CONFIG_FILE));
        writer.write(dir.resolve(Checkpoint.WEIGHTS_FILE), Checkpoint.named(model));
        return TinyModels.differingParameters(model, Checkpoint.load(dir, model.precision())).isEmpty();
    }

    static Qwen2Model fp32Model() {
        return TinyModels.randomModel(TinyModels.config(false), Precision.FP32, 51);
    }

    @Test
    void saveThenLoadRoundTripsBitIdentically() throws IOException {
        Qwen2Model model = fp32Model();
        assertThat(roundTripsBitIdentically(model, dir.resolve("a"), F32)).isTrue();
        Checkpoint.save(Checkpoint.load(dir.resolve("a"), Precision.FP32), dir.resolve("b"), DType.F32);
        assertThat(Files.readAllBytes(dir.resolve("b/model.safetensors")))
                .isEqualTo(Files.readAllBytes(dir.resolve("a/model.safetensors")));
        Tensor logits = model.forward(TinyModels.randomBatch(model.config(), 1, 5, 52)).logits();
        Tensor again = Checkpoint.load(dir.resolve("b"), Precision.FP32)
                .forward(TinyModels.randomBatch(model.config(), 1, 5, 52)).logits();
        assertThat(again.bitEquals(logits)).isTrue();
    }

    @Test
    void fp64RoundTripsThroughF64() throws IOException {
        Qwen2Model model = TinyModels.randomModel(TinyModels.config(true), Precision.FP64, 53);
        Checkpoint.save(model, dir, DType.F64);
        Qwen2Model loaded = Checkpoint.load(dir, Precision.FP64);
        assertThat(TinyModels.differingParameters(model, loaded)).isEmpty();
    }

    @Test
    void halfPrecisionFilesHoldTheRoundedValues() throws IOException {
        Qwen2Model model = fp32Model();
        for (DType dtype : List.of(DType.F16, DType.BF16)) {
            Path d = dir.resolve(dtype.name());
            Checkpoint.save(model, d, dtype);
            try (TensorSource source = Checkpoint.openWeights(d)) {
                assertThat(source.dtype("model.norm.weight")).isEqualTo(dtype);
            }
            Qwen2Model loaded = Checkpoint.load(d, Precision.FP32);
            for (Parameter p : model.parameters()) {
                Tensor got = loaded.parameter(p.name()).value();
                for (int i = 0; i < got.size(); i++) {
                    double v = p.value().get(i);
                    double expected = dtype == DType.F16 ? HalfFloat.roundToHalf(v) : HalfFloat.roundToBfloat16(v);
                    assertThat(got.get(i)).as("%s[%d] %s", p.name(), i, dtype).isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void shardedCheckpointsRoundTrip() throws IOException {
        Qwen2Model model = fp32Model();
        Checkpoint.saveSharded(model, dir, DType.F32, 2000);
        assertThat(dir.resolve("model.safetensors")).doesNotExist();
        try (var files = Files.list(dir)) {
            assertThat(files.filter(f -> f.getFileName().toString().startsWith("model-")).count()).isGreaterThan(2);
        }
        Qwen2Model loaded = Checkpoint.load(dir, Precision.FP32);
        assertThat(TinyModels.differingParameters(model, loaded)).isEmpty();
    }

    @Test
    void headerIsPaddedToEightBytesAndTensorsAreInModelOrder() throws IOException {
        Qwen2Model model = fp32Model();
        Checkpoint.save(model, dir, DType.F32);
        byte[] bytes = Files.readAllBytes(dir.resolve("model.safetensors"));
        long headerLength = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong();
        assertThat(headerLength % 8).isZero();
        String header = new String(bytes, 8, (int) headerLength, StandardCharsets.UTF_8);
        assertThat(header).startsWith("{\"__metadata__\":{\"format\":\"pt\"},\"model.embed_tokens.weight\"");
        try (SafeTensorsFile f = SafeTensorsFile.open(dir.resolve("model.safetensors"))) {
            assertThat(f.names()).containsExactlyElementsOf(model.parameters().stream().map(Parameter::name).toList());
            assertThat(f.metadata()).containsEntry("format", "pt");
        }
    }

    // ---- bad input -------------------------------------------------------------------------------------------

    private Path savedModel() throws IOException {
        Checkpoint.save(fp32Model(), dir, DType.F32);
        return dir.resolve("model.safetensors");
    }

    @Test
    void truncatedFileIsRejectedNamingTheTensor() throws IOException {
        Path file = savedModel();
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(bytes, bytes.length - 10));
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32)).isInstanceOf(SafeTensorsException.class)
                .hasMessageContaining("lm_head.weight").hasMessageContaining("truncated");
        Files.write(file, Arrays.copyOf(bytes, 5));
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32)).hasMessageContaining("truncated");
    }

    @Test
    void corruptedHeaderIsRejected() throws IOException {
        Path file = savedModel();
        byte[] bytes = Files.readAllBytes(file);
        byte[] broken = bytes.clone();
        broken[8] = '#'; // the header's opening brace
        Files.write(file, broken);
        assertThatThrownBy(() -> SafeTensorsFile.open(file)).hasMessageContaining("corrupted header");
        byte[] hugeLength = bytes.clone();
        ByteBuffer.wrap(hugeLength).order(ByteOrder.LITTLE_ENDIAN).putLong(1L << 40);
        Files.write(file, hugeLength);
        assertThatThrownBy(() -> SafeTensorsFile.open(file)).hasMessageContaining("corrupted header length");
    }

    @Test
    void inconsistentOffsetsShapesAndDtypesAreRejectedNamingTheTensor() throws IOException {
        String[][] cases = {
            {"{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", "t: shape [2] of F32 needs 8 bytes"},
            {"{\"t\":{\"dtype\":\"I8\",\"shape\":[8],\"data_offsets\":[0,8]}}", "t: unsupported or missing dtype"},
            {"{\"t\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", "t: invalid dimension"},
            {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    + "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", "tensor b starts at data byte 4"},
            {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", "4 data bytes after the last tensor"},
            {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", "tensor t starts at data byte 4"},
            {"{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    + "\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", "corrupted header"},
        };
        for (String[] c : cases) {
            Path file = dir.resolve("case.safetensors");
            Files.write(file, rawFile(c[0], 8));
            assertThatThrownBy(() -> SafeTensorsFile.open(file)).as(c[0]).isInstanceOf(SafeTensorsException.class)
                    .hasMessageContaining(c[1]);
        }
    }

    @Test
    void nonFiniteValuesAreRejectedNamingTheTensor() throws IOException {
        Path file = dir.resolve("nan.safetensors");
        byte[] bytes = rawFile("{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8);
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putFloat(bytes.length - 4, Float.NaN);
        Files.write(file, bytes);
        try (SafeTensorsFile f = SafeTensorsFile.open(file)) {
            assertThatThrownBy(() -> f.read("t", Precision.FP32)).hasMessageContaining("tensor t element 1 is NaN");
        }
    }

    @Test
    void missingTensorIsRejectedNamingIt() throws IOException {
        Qwen2Model model = fp32Model();
        List<SafeTensorsWriter.Named> all = Checkpoint.named(model);
        model.config().write(dir.resolve("config.json"));
        SafeTensorsWriter.write(dir.resolve("model.safetensors"),
                all.stream().filter(n -> !n.name().equals("model.layers.1.mlp.up_proj.weight")).toList(), DType.F32,
                Map.of());
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32))
                .hasMessageContaining("missing tensor model.layers.1.mlp.up_proj.weight");
    }

    @Test
    void shapeDisagreeingWithTheConfigIsRejectedNamingTheTensor() throws IOException {
        Qwen2Model model = fp32Model();
        Checkpoint.save(model, dir, DType.F32);
        Qwen2Config c = model.config();
        new Qwen2Config(c.vocabSize(), c.hiddenSize(), c.intermediateSize() + 8, c.numHiddenLayers(),
                c.numAttentionHeads(), c.numKeyValueHeads(), c.maxPositionEmbeddings(), c.ropeTheta(), c.rmsNormEps(),
                c.tieWordEmbeddings()).write(dir.resolve("config.json"));
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32))
                .hasMessageContaining("tensor model.layers.0.mlp.gate_proj.weight has shape [24, 16] but the config needs [32, 16]");
    }

    @Test
    void unexpectedTensorIsRejected() throws IOException {
        Qwen2Model untied = fp32Model();
        Checkpoint.save(untied, dir, DType.F32);
        Qwen2Config c = untied.config();
        new Qwen2Config(c.vocabSize(), c.hiddenSize(), c.intermediateSize(), c.numHiddenLayers(), c.numAttentionHeads(),
                c.numKeyValueHeads(), c.maxPositionEmbeddings(), c.ropeTheta(), c.rmsNormEps(), true)
                .write(dir.resolve("config.json"));
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32))
                .hasMessageContaining("unexpected tensor lm_head.weight").hasMessageContaining("tie_word_embeddings");
    }

    @Test
    void aFailedLoadLeavesTheModelUntouched() throws IOException {
        Qwen2Model target = fp32Model();
        Qwen2Model before = target.copy();
        Qwen2Model other = TinyModels.randomModel(TinyModels.config(false), Precision.FP32, 54);
        Checkpoint.save(other, dir, DType.F32);
        Path file = dir.resolve("model.safetensors");
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putFloat(bytes.length - 4, Float.POSITIVE_INFINITY);
        Files.write(file, bytes);
        assertThatThrownBy(() -> Checkpoint.loadInto(target, dir)).hasMessageContaining("lm_head.weight");
        assertThat(TinyModels.differingParameters(before, target)).isEmpty();
    }

    @Test
    void shardIndexDisagreeingWithItsShardsIsRejected() throws IOException {
        Qwen2Model model = fp32Model();
        Checkpoint.saveSharded(model, dir, DType.F32, 2000);
        Path index = dir.resolve(SafeTensorsWriter.INDEX_FILE);
        String json = Files.readString(index);
        Files.writeString(index, json.replace("\"model.norm.weight\" : \"model-", "\"model.norm.weight\" : \"xmodel-"));
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32)).hasMessageContaining("xmodel-");
        String moved = json.replaceFirst("\"model.embed_tokens.weight\" : \"model-00001", "\"model.embed_tokens.weight\" : \"model-00002");
        Files.writeString(index, moved);
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32))
                .hasMessageContaining("model.embed_tokens.weight is missing from shard model-00002");
    }

    @Test
    void missingFolderContentsAreNamed() {
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32)).hasMessageContaining("no config.json");
        assertThatThrownBy(() -> Checkpoint.openWeights(dir)).hasMessageContaining("neither model.safetensors");
    }

    /** A file with the given header (space-padded to 8) followed by {@code dataBytes} zero bytes. */
    static byte[] rawFile(String header, int dataBytes) {
        byte[] json = header.getBytes(StandardCharsets.UTF_8);
        int padded = (json.length + 7) / 8 * 8;
        ByteBuffer b = ByteBuffer.allocate(8 + padded + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(padded).put(json);
        for (int i = json.length; i < padded; i++) {
            b.put((byte) ' ');
        }
        return b.array();
    }
}
