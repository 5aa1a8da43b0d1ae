package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.data.TokenBlocks;
import org.mechspec.data.DataFiles;
import org.mechspec.data.WikiText2;
import org.mechspec.spec.MissingDataSkips;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The committed fixture {@code fixtures/checkpoints/tiny-qwen2} is what its training record says: same bytes,
 * same test perplexity on the record's quick-check blocks, and within the issue's constraints.
 */
@ExtendWith(MissingDataSkips.class)
@Tag("model")
class FixtureTest {
    static final Path DIR = Checkpoint.tinyQwen2();
    /** The quick check repeats the record's exact computation, so only last-bit drift is tolerated. */
    static final double PERPLEXITY_TOLERANCE = 1e-9;

    static JsonNode record() throws IOException {
        return new ObjectMapper().readTree(DIR.resolve(Pretrain.RECORD_FILE).toFile());
    }

    /** Perplexity of {@code model} on the record's quick-check test blocks (one forward pass, as recorded). */
    static double quickCheckPerplexity(Qwen2Model model, JsonNode record) {
        TokenBlocks blocks = TokenBlocks.ofBytes(WikiText2.TEST.bytes(), record.at("/data/block_length").intValue());
        JsonNode idx = record.at("/ci_check/test_block_indices");
        int[] indices = new int[idx.size()];
        for (int i = 0; i < indices.length; i++) {
            indices[i] = idx.get(i).intValue();
        }
        return Evaluation.perplexity(Evaluation.tokenNll(model, blocks, indices, indices.length));
    }

    /** The fixture as committed, in fp32. */
    static Qwen2Model fixture() {
        return Checkpoint.load(DIR, Precision.FP32);
    }

    /** The contract's predicate: {@code weights} bytes against the record, {@code model}'s perplexity against it. */
    static boolean matchesRecord(byte[] weights, Qwen2Model model) throws IOException {
        JsonNode record = record();
        return ModelChecks.fixtureMatchesRecord(DataFiles.sha256(weights),
                record.at("/checkpoint/model_safetensors_sha256").textValue(), quickCheckPerplexity(model, record),
                record.at("/ci_check/test_perplexity").doubleValue(), PERPLEXITY_TOLERANCE);
    }

    @Test
    void fixtureShaAndTestPerplexityMatchItsTrainingRecord() throws IOException {
        assertThat(matchesRecord(Files.readAllBytes(DIR.resolve(Checkpoint.WEIGHTS_FILE)), fixture())).isTrue();
        assertThat(DataFiles.sha256(Files.readAllBytes(DIR.resolve(Checkpoint.CONFIG_FILE))))
                .isEqualTo(record().at("/checkpoint/config_sha256").textValue());
    }

    @Test
    void fixtureMeetsTheIssueConstraints() throws IOException {
        JsonNode r = record();
        Qwen2Config c = Qwen2Config.read(DIR.resolve(Checkpoint.CONFIG_FILE));
        assertThat(c.numHiddenLayers()).isGreaterThanOrEqualTo(6);
        assertThat(c.headDim()).isGreaterThanOrEqualTo(32);
        assertThat(c.numKeyValueHeads()).isLessThan(c.numAttentionHeads());
        assertThat(c.vocabSize()).isEqualTo(256);
        assertThat(Files.size(DIR.resolve(Checkpoint.WEIGHTS_FILE))).isLessThanOrEqualTo(4_000_000L)
                .isEqualTo(r.at("/checkpoint/model_safetensors_bytes").longValue());
        JsonNode log = new ObjectMapper().readTree(DIR.resolve(Pretrain.LOG_FILE).toFile());
        assertThat(log.at("/training/wall_time_seconds").doubleValue()).isPositive().isLessThanOrEqualTo(20 * 60);
        assertThat(r.at("/data/train_sha256").textValue()).isEqualTo(WikiText2.VALIDATION.sha256());
        assertThat(r.at("/data/test_sha256").textValue()).isEqualTo(WikiText2.TEST.sha256());
        assertThat(r.at("/evaluation/blocks").textValue()).isEqualTo("all");
        double ppl = r.at("/evaluation/test_perplexity").doubleValue();
        double unigram = r.at("/evaluation/unigram_perplexity").doubleValue();
        assertThat(ppl).isEqualTo(StrictMath.exp(r.at("/evaluation/test_nll").doubleValue()));
        assertThat(ppl / unigram).isLessThanOrEqualTo(0.6);
        assertThat(r.at("/training/loss_curve").size()).isGreaterThan(10);
        long params = 0;
        for (Parameter p : Checkpoint.load(DIR, Precision.FP32).parameters()) {
            params += p.value().size();
        }
        assertThat(params).isEqualTo(r.at("/checkpoint/parameters").longValue());
    }

    @Test
    void recordedUnigramPerplexityIsReproducible() throws IOException {
        JsonNode r = record();
        TokenBlocks test = TokenBlocks.ofBytes(WikiText2.TEST.bytes(), r.at("/data/block_length").intValue());
        double[] nll = UnigramByteModel.fit(WikiText2.VALIDATION.bytes()).tokenNll(test, Evaluation.allBlocks(test.count()));
        assertThat(Evaluation.perplexity(nll)).isEqualTo(r.at("/evaluation/unigram_perplexity").doubleValue());
        assertThat(nll.length).isEqualTo(r.at("/evaluation/predicted_tokens").intValue());
    }
}
