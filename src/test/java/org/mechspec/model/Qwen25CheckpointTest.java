package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.compute.HalfFloat;

/**
 * Folders laid out as Hugging Face ships Qwen/Qwen2.5-0.5B (the real config's keys, bf16 weights, q/k/v biases,
 * tied embeddings, the real vocabulary) load, run and train; generated at test time by {@link RandomQwenCheckpoint}.
 */
@Tag("model")
class Qwen25CheckpointTest {
    @TempDir
    Path dir;

    @Test
    void aReducedQwen25FolderLoadsWithItsBf16ValuesAndGivesFiniteLogits() throws IOException {
        RandomQwenCheckpoint.Dims dims = RandomQwenCheckpoint.REDUCED;
        RandomQwenCheckpoint.write(dir, dims, 140);
        List<String> keys = new ArrayList<>();
        new ObjectMapper().readTree(dir.resolve(Checkpoint.CONFIG_FILE).toFile()).fieldNames()
                .forEachRemaining(keys::add);
        List<String> realKeys = new ArrayList<>();
        RandomQwenCheckpoint.realConfig().fieldNames().forEachRemaining(realKeys::add);
        assertThat(keys).containsExactlyElementsOf(realKeys);
        try (TensorSource source = Checkpoint.openWeights(dir)) {
            assertThat(source.names()).contains("model.layers.1.self_attn.k_proj.bias")
                    .doesNotContain("lm_head.weight").allSatisfy(n -> assertThat(source.dtype(n)).isEqualTo(DType.BF16));
        }

        Qwen2Model model = Checkpoint.load(dir, Precision.FP32);
        assertThat(model.config()).isEqualTo(new Qwen2Config(151936, 64, 128, 2, 4, 2, 32768, 1e6, 1e-6, true));
        assertThat(model.config().headDim()).isEqualTo(16);
        // Every element, the 19 MB embedding across many read chunks included, is the bf16 rounding of the original.
        for (SafeTensorsWriter.Named original : RandomQwenCheckpoint.tensors(dims, 140)) {
            Tensor loaded = model.parameter(original.name()).value();
            for (int i = 0; i < loaded.size(); i++) {
                double expected = HalfFloat.roundToBfloat16(original.tensor().get(i));
                if (loaded.get(i) != expected) {
                    assertThat(loaded.get(i)).as("%s[%d]", original.name(), i).isEqualTo(expected);
                }
            }
        }
        Batch batch = new Batch(new int[] {0, 151935, 17, 98765, 151643, 3, 4, 5}, null, 2, 4);
        Tensor logits = model.forward(batch).logits();
        assertThat(logits.shape()).containsExactly(8, 151936);
        assertThat(logits.firstNonFinite()).isEqualTo(-1);
    }

    @Test
    void aBf16FolderLoadedAndSavedAgainInBf16HoldsTheSameTensors() throws IOException {
        RandomQwenCheckpoint.write(dir.resolve("generated"), RandomQwenCheckpoint.TINY, 141);
        Qwen2Model model = Checkpoint.load(dir.resolve("generated"), Precision.FP32);
        Checkpoint.save(model, dir.resolve("saved"), DType.BF16);
        try (TensorSource generated = Checkpoint.openWeights(dir.resolve("generated"));
             TensorSource saved = Checkpoint.openWeights(dir.resolve("saved"))) {
            assertThat(saved.names()).containsExactlyInAnyOrderElementsOf(generated.names());
            for (String name : generated.names()) {
                assertThat(saved.read(name, Precision.FP64).bitEquals(generated.read(name, Precision.FP64)))
                        .as(name).isTrue();
            }
        }
    }

    @Test
    void gradientsOfABf16LoadedModelAgreeWithFiniteDifferences() throws IOException {
        RandomQwenCheckpoint.write(dir, RandomQwenCheckpoint.TINY, 142);
        Qwen2Model model = Checkpoint.load(dir, Precision.FP64);
        Map<String, Double> errors = GradientCheck.relativeErrors(model,
                TinyModels.randomBatch(model.config(), 2, 5, 143), null, GradientCheckTest.STEP);
        assertThat(errors).containsKeys("model.embed_tokens.weight", "model.layers.1.self_attn.q_proj.bias")
                .doesNotContainKey("lm_head.weight").hasSize(model.parameters().size());
        assertThat(ModelChecks.gradientsAgree(errors, GradientCheckTest.TOLERANCE)).as("%s", errors).isTrue();
    }

    @Test
    void theHashesOfTheFilesALoadReadsAreReported() throws IOException {
        Path single = RandomQwenCheckpoint.write(dir.resolve("single"), RandomQwenCheckpoint.TINY, 144);
        Files.writeString(single.resolve("tokenizer.json"), "{}"); // in the folder, but no load reads it
        Map<String, String> hashes = CheckpointHashes.ofLoadedFiles(single);
        assertThat(hashes).containsOnlyKeys("config.json", "model.safetensors");
        assertThat(hashes.get("model.safetensors")).isEqualTo(CheckpointHashes.sha256(single.resolve("model.safetensors")));

        Path sharded = dir.resolve("sharded");
        Checkpoint.saveSharded(Checkpoint.load(single, Precision.FP32), sharded, DType.BF16, 1000);
        Map<String, String> shardedHashes = CheckpointHashes.ofLoadedFiles(sharded);
        assertThat(shardedHashes).containsKeys("config.json", SafeTensorsWriter.INDEX_FILE);
        assertThat(shardedHashes.keySet()).filteredOn(n -> n.matches("model-\\d{5}-of-\\d{5}\\.safetensors"))
                .hasSizeGreaterThan(1).hasSize(shardedHashes.size() - 2);
        assertThat(CheckpointHashes.require(sharded, shardedHashes)).isEqualTo(shardedHashes);
    }
}
