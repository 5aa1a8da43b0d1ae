package org.mechspec.model;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Hugging Face style model folder: {@code config.json} plus {@code model.safetensors} or a sharded set with
 * {@code model.safetensors.index.json}. Loading checks that the stored tensors are exactly the model's
 * parameters with the shapes the config implies, and fills the model only after every tensor has been read and
 * checked, so a bad checkpoint never yields a partial model.
 */
public final class Checkpoint {
    public static final String CONFIG_FILE = "config.json";
    public static final String WEIGHTS_FILE = "model.safetensors";

    private Checkpoint() {
    }

    /**
     * The project's trained small model, {@code checkpoints/tiny-qwen2} under the fixtures folder
     * ({@code -Dmechspec.fixtures.dir}, default {@code fixtures} in the working directory).
     */
    public static Path tinyQwen2() {
        return Path.of(System.getProperty("mechspec.fixtures.dir", "fixtures"), "checkpoints", "tiny-qwen2");
    }

    /**
     * Reads the config and weights of {@code dir} into a fresh model of the given precision. Each tensor is decoded
     * (bf16, f16 or f32 widened once) straight into the model's own tensor, so the weights are in memory once; a
     * failure drops the half-filled model with the exception, so no partial model escapes.
     */
    public static Qwen2Model load(Path dir, Precision precision) {
        Qwen2Model model = Qwen2Model.zeros(readConfig(dir), precision);
        try (TensorSource source = openWeights(dir)) {
            requireExactlyTheParameters(model, source, dir);
            for (Parameter p : model.parameters()) {
                source.readInto(p.name(), p.value());
            }
        }
        return model;
    }

    /** The config.json of {@code dir}, refused (naming the key) when it describes another architecture. */
    public static Qwen2Config readConfig(Path dir) {
        Path configFile = dir.resolve(CONFIG_FILE);
        if (!Files.isRegularFile(configFile)) {
            throw new SafeTensorsException(dir + ": no " + CONFIG_FILE);
        }
        try {
            return Qwen2Config.read(configFile);
        } catch (IllegalArgumentException e) {
            throw new SafeTensorsException(e.getMessage(), e);
        }
    }

    /**
     * Loads the weights of {@code dir} into an existing model (e.g. one whose attention block was replaced and has
     * parameters of its own): the stored names must be exactly {@link Qwen2Model#parameters()}' names. Every
     * tensor is read into a staging copy first, so a bad checkpoint leaves the model untouched; the staged tensors
     * then become the parameters' values, so a tensor the model shared with a copy is never written.
     */
    public static void loadInto(Qwen2Model model, Path dir) {
        Map<String, Tensor> read = new LinkedHashMap<>();
        try (TensorSource source = openWeights(dir)) {
            requireExactlyTheParameters(model, source, dir);
            for (Parameter p : model.parameters()) {
                read.put(p.name(), source.read(p.name(), model.precision()));
            }
        }
        for (Parameter p : model.parameters()) {
            Tensor staged = read.get(p.name());
            if (staged.precision() != p.value().precision()) { // e.g. an fp64 block parameter in an fp32 model
                Tensor converted = Tensor.zeros(p.value().precision(), p.value().shape());
                converted.copyFrom(staged);
                staged = converted;
            }
            p.replaceValue(staged, false);
        }
    }

    /**
     * The files of {@code dir} a {@link #load} reads, relative to it: config.json and the weights (one file, or
     * the index and its shards). Hash them with {@link CheckpointHashes#of} for an artifact's checkpoint block.
     */
    public static List<String> filesLoaded(Path dir) {
        List<String> out = new ArrayList<>();
        out.add(CONFIG_FILE);
        try (TensorSource source = openWeights(dir)) {
            for (Path f : source.files()) {
                out.add(dir.relativize(f).toString());
            }
        }
        return out;
    }

    /** Checks the header alone: every parameter stored with its shape, and nothing else stored. */
    private static void requireExactlyTheParameters(Qwen2Model model, TensorSource source, Path dir) {
        Set<String> stored = new LinkedHashSet<>(source.names());
        for (Parameter p : model.parameters()) {
            if (!stored.remove(p.name())) {
                throw new SafeTensorsException(dir + ": missing tensor " + p.name());
            }
            int[] shape = source.shape(p.name());
            if (!p.value().hasShape(shape)) {
                throw new SafeTensorsException(dir + ": tensor " + p.name() + " has shape " + Arrays.toString(shape)
                        + " but the config needs " + Arrays.toString(p.value().shape()));
            }
        }
        if (!stored.isEmpty()) {
            throw new SafeTensorsException(dir + ": unexpected tensor " + stored.iterator().next()
                    + (stored.size() > 1 ? " (and " + (stored.size() - 1) + " more)" : "")
                    + " is not a parameter of this model"
                    + (stored.contains("lm_head.weight") ? " (config says tie_word_embeddings)" : ""));
        }
    }

    /** model.safetensors, or the sharded set named by model.safetensors.index.json. */
    public static TensorSource openWeights(Path dir) {
        Path single = dir.resolve(WEIGHTS_FILE);
        Path index = dir.resolve(SafeTensorsWriter.INDEX_FILE);
        if (Files.isRegularFile(single)) {
            return SafeTensorsFile.open(single);
        }
        if (Files.isRegularFile(index)) {
            return ShardedSafeTensors.open(index);
        }
        throw new SafeTensorsException(dir + ": neither " + WEIGHTS_FILE + " nor " + SafeTensorsWriter.INDEX_FILE);
    }

    /** Writes config.json and model.safetensors (parameters in Hugging Face order) to {@code dir}. */
    public static void save(Qwen2Model model, Path dir, DType dtype) throws IOException {
        Files.createDirectories(dir);
        model.config().write(dir.resolve(CONFIG_FILE));
        SafeTensorsWriter.write(dir.resolve(WEIGHTS_FILE), named(model), dtype, Map.of("format", "pt"));
    }

    /** Writes config.json and a sharded set of at most {@code maxShardBytes} data bytes per shard. */
    public static void saveSharded(Qwen2Model model, Path dir, DType dtype, long maxShardBytes) throws IOException {
        Files.createDirectories(dir);
        model.config().write(dir.resolve(CONFIG_FILE));
        SafeTensorsWriter.writeSharded(dir, named(model), dtype, maxShardBytes, Map.of("format", "pt"));
    }

    static List<SafeTensorsWriter.Named> named(Qwen2Model model) {
        List<SafeTensorsWriter.Named> out = new ArrayList<>();
        for (Parameter p : model.parameters()) {
            out.add(new SafeTensorsWriter.Named(p.name(), p.value()));
        }
        return out;
    }
}
