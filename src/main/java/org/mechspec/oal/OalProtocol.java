package org.mechspec.oal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.mechspec.compute.Backend;
import org.mechspec.compute.Progress;
import org.mechspec.compute.Rng;
import org.mechspec.data.TokenBlocks;
import org.mechspec.model.Batch;
import org.mechspec.model.Lora;
import org.mechspec.model.LoraConfig;
import org.mechspec.model.Qwen2Config;
import org.mechspec.model.Qwen2Model;
import org.mechspec.model.SoftmaxAttention;
import org.mechspec.oal.BlockLedger.Phase;
import org.mechspec.oal.BlockLedger.Split;
import org.mechspec.tokenize.BpeTokenizer;

/**
 * One seed of the OAL protocol (protocols.md, OAL) on a Qwen2-architecture model: blocks, grouping and calibration of layer
 * {@value #LAYER}, the global baseline, matched LoRA for the softmax and the converted model, evaluation on the test
 * blocks and the bootstrap. Rng(seed) is consumed in the pinned order: validation shuffle, test shuffle, calibration
 * noise, LoRA A matrices, dropout masks — then (our choice) the bootstrap's indices.
 */
final class OalProtocol {
    static final int LAYER = 4;
    static final int SEQUENCE_LENGTH = 32;
    static final LoraConfig LORA = new LoraConfig(8, 16.0, 0.05);
    static final int LORA_STEPS = 3;
    static final double LORA_LEARNING_RATE = 1e-3;
    static final int BOOTSTRAP_REPLICATES = 64;

    private OalProtocol() {
    }

    /**
     * Runs one seed on blocks of {@value #SEQUENCE_LENGTH} tokens cut from the validation and test splits (bytes for
     * the project's fixture, BPE tokens for a Hugging Face checkpoint). The base model is frozen first: LoRA trains
     * adapters only, and frozen weights are shared, not copied, by the adapted models.
     */
    static OalRun run(long seed, Backend backend, Qwen2Model base, TokenBlocks valid, TokenBlocks test) {
        long start = System.nanoTime();
        requireConvertible(base);
        requireBlockLength(valid);
        requireBlockLength(test);
        base.setBaseTrainable(false);
        Qwen2Config config = base.config();
        int heads = config.numAttentionHeads();
        int d = config.headDim();
        Grouping.requireSplittable(d);
        GroupedQuadraticAttentionOps ops = GroupedQuadraticAttentionOps.forBackend(backend);

        Rng rng = new Rng(seed);
        BlockRoles roles = BlockRoles.draw(rng, valid.count(), test.count());
        double[][][] noise = Calibration.drawNoise(rng, heads, Grouping.GROUPS + 1);
        BlockLedger ledger = new BlockLedger();

        // Grouping and calibration of the converted layer, on the untouched (softmax) model.
        Progress.step("oal", seed, "grouping and calibration of layer " + LAYER);
        LayerSamples grouping = samples(base, valid, roles.grouping(), ledger, Phase.GROUPING, Split.VALIDATION);
        double[] contributions = Grouping.contributions(grouping);
        int[] groups = Grouping.assign(contributions, heads, d);
        LayerSamples calibration = samples(base, valid, roles.calibration(), ledger, Phase.CALIBRATION, Split.VALIDATION);
        ledger.record(Phase.SELECTION, Split.VALIDATION, roles.grouping());
        Calibration.HeadFit[] fits = new Calibration.HeadFit[heads];
        double[][] globalFactors = new double[heads][];
        for (int h = 0; h < heads; h++) {
            int[] headGroups = Arrays.copyOfRange(groups, h * d, (h + 1) * d);
            fits[h] = Calibration.calibrateHead(new HeadObjective(calibration, h, headGroups, Grouping.GROUPS),
                    new HeadObjective(grouping, h, headGroups, Grouping.GROUPS), noise[h]);
            globalFactors[h] = Calibration.globalHead(new HeadObjective(calibration, h, new int[d], 1));
        }
        double[][] oalFactors = new double[heads][];
        for (int h = 0; h < heads; h++) {
            oalFactors[h] = fits[h].l();
        }
        Progress.step("oal", seed, "validation against the global baseline");
        LayerSamples validation = samples(base, valid, roles.validation(), ledger, Phase.VALIDATION, Split.VALIDATION);
        double oalMse = outputMse(ops, validation, groups, Grouping.GROUPS, oalFactors);
        double globalMse = outputMse(ops, validation, Grouping.global(heads, d), 1, globalFactors);
        KernelAgreement agreement = KernelAgreement.measure(ops, validation.block(0), groups, Grouping.GROUPS, oalFactors);
        double minSimilarity = PairwiseOracle.minSimilarityFromGram(validation.shape(Grouping.GROUPS), validation.q(),
                validation.k(), groups, QuadraticForm.gramAll(oalFactors, Grouping.GROUPS + 1));

        // Matched LoRA: one draw of A matrices and one dropout mask per step, shared by both models.
        Progress.step("oal", seed, "matched LoRA, " + LORA_STEPS + " steps");
        ConvertedAttention block = new ConvertedAttention(LAYER, ops, groups, Grouping.GROUPS, oalFactors);
        Batch adaptation = nextTokenBatch(valid, roles.adaptation(), ledger, Phase.ADAPTATION, Split.VALIDATION);
        MatchedLora.Adapted adapted = MatchedLora.adapt(base, LAYER, block, adaptation, rng, LORA, LORA_STEPS,
                LORA_LEARNING_RATE);
        Qwen2Model softmax = adapted.softmax();
        Qwen2Model converted = adapted.converted();

        // Evaluation: the test blocks meet a model here for the first time.
        Progress.step("oal", seed, "evaluation on the test blocks");
        Batch testBatch = nextTokenBatch(test, roles.test(), ledger, Phase.EVALUATION, Split.TEST);
        double[] softmaxNll = softmax.forward(testBatch).tokenNll();
        double[] oalNll = converted.forward(testBatch).tokenNll();
        double[] diff = new double[oalNll.length];
        for (int i = 0; i < diff.length; i++) {
            diff[i] = oalNll[i] - softmaxNll[i];
        }
        double[] means = Bootstrap.replicateMeans(diff, BOOTSTRAP_REPLICATES, rng);
        double seconds = (System.nanoTime() - start) / 1e9;
        return new OalRun(seed, backend.name(), roles, ledger,
                new OalRun.Conversion(contributions, groups, fits, globalFactors),
                new OalRun.Samples(grouping, calibration, validation),
                new OalRun.Validation(oalMse, globalMse, agreement, minSimilarity),
                new OalRun.Adaptation(adapted.softmaxRecord(), adapted.convertedRecord(),
                        Lora.parameterDeltaL2(softmax), Lora.parameterDeltaL2(converted), adapted),
                new OalRun.Evaluation(softmaxNll, oalNll, Bootstrap.percentile(means, 2.5),
                        Bootstrap.percentile(means, 97.5)),
                seconds);
    }

    /** The checkpoint must have the layer to convert, still with softmax attention, and no LoRA yet. */
    static void requireConvertible(Qwen2Model base) {
        if (base.layerCount() <= LAYER) {
            throw new IllegalArgumentException("the checkpoint has " + base.layerCount() + " decoder layers (0.."
                    + (base.layerCount() - 1) + "): OAL converts layer " + LAYER + ", which it does not have");
        }
        if (!(base.attention(LAYER) instanceof SoftmaxAttention)) {
            throw new IllegalArgumentException("layer " + LAYER + " of the checkpoint is not softmax attention ("
                    + base.attention(LAYER).getClass().getSimpleName() + "): there is nothing to convert");
        }
        if (!base.loraAdapters().isEmpty()) {
            throw new IllegalArgumentException("the checkpoint already carries LoRA adapters; the protocol attaches its own");
        }
    }

    /**
     * The blocks of one split for a Hugging Face checkpoint: the text (UTF-8) encoded whole by its BPE, with no
     * special tokens, then cut into consecutive {@value #SEQUENCE_LENGTH}-token blocks; the tail is dropped.
     */
    static TokenBlocks bpeBlocks(BpeTokenizer tokenizer, byte[] split) {
        return new TokenBlocks(tokenizer.encodeIds(new String(split, StandardCharsets.UTF_8)), SEQUENCE_LENGTH);
    }

    private static void requireBlockLength(TokenBlocks blocks) {
        if (blocks.blockLength() != SEQUENCE_LENGTH) {
            throw new IllegalArgumentException("the protocol reads blocks of " + SEQUENCE_LENGTH + " tokens, got blocks of "
                    + blocks.blockLength());
        }
    }

    /** The converted layer's activations of the given blocks (full 32-token sequences, no dropout). */
    static LayerSamples samples(Qwen2Model model, TokenBlocks blocks, int[] indices, BlockLedger ledger, Phase phase,
                                Split split) {
        ledger.record(phase, split, indices);
        Batch batch = new Batch(blocks.blocks(indices), null, indices.length, SEQUENCE_LENGTH);
        return LayerSamples.of(model.forward(batch).layer(LAYER));
    }

    /** The next-token batch of some blocks; the ledger records exactly the blocks fetched, where they are fetched. */
    static Batch nextTokenBatch(TokenBlocks blocks, int[] indices, BlockLedger ledger, Phase phase, Split split) {
        ledger.record(phase, split, indices);
        return Batch.nextToken(blocks.blocks(indices), SEQUENCE_LENGTH);
    }

    /** Mean over every element of (grouped-quadratic output − softmax output)², all heads. */
    static double outputMse(GroupedQuadraticAttentionOps ops, LayerSamples s, int[] groups, int groupCount, double[][] factors) {
        double[] m = QuadraticForm.gramAll(factors, groupCount + 1);
        double[] out = ops.dense(s.shape(groupCount), s.q(), s.k(), s.v(), groups, m);
        double sum = 0.0;
        for (int i = 0; i < out.length; i++) {
            double diff = out[i] - s.softmax()[i];
            sum += diff * diff;
        }
        return sum / out.length;
    }
}
