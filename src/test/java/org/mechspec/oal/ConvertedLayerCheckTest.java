package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;
import org.mechspec.data.TokenBlocks;
import org.mechspec.model.Batch;
import org.mechspec.model.Precision;
import org.mechspec.model.Qwen2Model;
import org.mechspec.spec.Breaks;
import org.mechspec.spec.FlashRule;

/**
 * The converted-layer check (converted_layer_is_calibrated_oal) on tiny models whose layer 4 runs a grouped-quadratic
 * block: its verdict with the calibrated factors, with one factor broken, with a NaN factor, and its bound ratio
 * against the documented bound u_s·|oracle| + (1 + u_s)·2·e.
 */
@Tag("oal")
class ConvertedLayerCheckTest {
    private static final int[] CHECKED = {0, 1};

    private static final Rng FACTORS = new Rng(21);
    private static final int[] GROUPS = TinyOal.groups(FACTORS, 2, 16);
    private static final double[][] CALIBRATED = TinyOal.factors(FACTORS, 2, Grouping.GROUPS, 0.3);
    private static final TokenBlocks BLOCKS = TokenBlocks.ofBytes(TinyOal.text(21, 32 * 2), OalProtocol.SEQUENCE_LENGTH);

    /** A tiny 5-layer model in {@code precision} whose layer 4 computes the grouped-quadratic attention of {@code l}. */
    private static Qwen2Model convertedModel(Precision precision, double[][] l) {
        Qwen2Model m = Qwen2Model.initialized(TinyOal.config(5), precision, new Rng(22), 0.2);
        m.setAttention(OalProtocol.LAYER, new ConvertedAttention(OalProtocol.LAYER, CpuGroupedQuadraticAttention.INSTANCE, GROUPS,
                Grouping.GROUPS, l));
        return m;
    }

    /** The calibrated factors with one entry of head 1's L (row 2, column 1) moved by {@code delta}. */
    private static double[][] oneFactorBroken(double delta) {
        double[][] l = {CALIBRATED[0].clone(), CALIBRATED[1].clone()};
        l[1][2 * (Grouping.GROUPS + 1) + 1] += delta;
        return l;
    }

    private static DefinitionChecks.LayerError check(Qwen2Model model, double[][] l) {
        return DefinitionChecks.convertedLayer(model, BLOCKS, CHECKED, GROUPS, Grouping.GROUPS, l);
    }

    /**
     * Catches a bound that subtracts the error terms (u_s·|o| − (1+u_s)·2e): in fp64 storage 2e ≥ 2u·|o| exceeds
     * u·|o|, so every denominator would go negative and a layer computed with a broken factor would pass.
     */
    @Test
    @Breaks(paper = "oal", check = "converted_layer_is_calibrated_oal")
    void fp64LayerWithOneBrokenFactorFailsAndTheCalibratedOnePasses() {
        DefinitionChecks.LayerError real = check(convertedModel(Precision.FP64, CALIBRATED), CALIBRATED);
        assertThat(real.holds()).as("%s", real).isTrue();
        DefinitionChecks.LayerError broken = check(convertedModel(Precision.FP64, oneFactorBroken(1e-3)), CALIBRATED);
        assertThat(broken.holds()).as("%s", broken).isFalse();
        assertThat(broken.boundRatio()).isGreaterThan(1.0);
    }

    /** Catches the fp32 model's check failing a broken factor, or rejecting its own calibrated layer. */
    @Test
    @Breaks(paper = "oal", check = "converted_layer_is_calibrated_oal")
    void fp32LayerWithOneBrokenFactorFailsAndTheCalibratedOnePasses() {
        assertThat(check(convertedModel(Precision.FP32, CALIBRATED), CALIBRATED).holds()).isTrue();
        assertThat(check(convertedModel(Precision.FP32, oneFactorBroken(1e-3)), CALIBRATED).holds()).isFalse();
    }

    /**
     * Catches any change of the bound's terms (e.g. (1 − u_s) for (1 + u_s), or u_s·|o| − … for u_s·|o| + …): the
     * reported ratio and error are the documented max_i |out_i − oracle_i| / (u_s·|oracle_i| + (1 + u_s)·2·e_i), bit
     * for bit, for the calibrated layer and for one computed with a broken factor.
     */
    @Test
    void boundRatioIsTheDocumentedBoundInFp32() {
        for (double delta : new double[] {0.0, 1e-3}) {
            Qwen2Model model = convertedModel(Precision.FP32, oneFactorBroken(delta));
            LayerSamples s = LayerSamples.of(model.forward(new Batch(BLOCKS.blocks(CHECKED), null, CHECKED.length,
                    OalProtocol.SEQUENCE_LENGTH)).layer(OalProtocol.LAYER));
            var shape = s.shape(Grouping.GROUPS);
            double[] oracle = PairwiseOracle.attention(shape, s.q(), s.k(), s.v(), GROUPS, CALIBRATED);
            double[] e = PairwiseOracle.errorBound(shape, s.q(), s.k(), s.v(), GROUPS, CALIBRATED,
                    FlashRule.FP64_UNIT_ROUNDOFF);
            double u = FlashRule.FP32_UNIT_ROUNDOFF;
            double maxError = 0.0;
            double ratio = 0.0;
            for (int i = 0; i < oracle.length; i++) {
                double err = Math.abs(s.softmax()[i] - oracle[i]);
                maxError = Math.max(maxError, err);
                ratio = Math.max(ratio, err / (u * Math.abs(oracle[i]) + (1 + u) * 2 * e[i]));
            }
            DefinitionChecks.LayerError got = check(model, CALIBRATED);
            assertThat(got.boundRatio()).as("delta %s", delta).isEqualTo(ratio);
            assertThat(got.maxError()).as("delta %s", delta).isEqualTo(maxError);
            assertThat(got.holds()).as("delta %s", delta).isEqualTo(delta == 0.0);
        }
    }

    /** Catches the NaN exit returning nothing: a NaN factor (a diverged calibration) is reported as a NaN ratio that fails. */
    @Test
    void nanFactorIsReportedAsAFailingNanRatio() {
        double[][] diverged = {CALIBRATED[0].clone(), CALIBRATED[1].clone()};
        diverged[1][0] = Double.NaN;
        DefinitionChecks.LayerError e = check(convertedModel(Precision.FP32, CALIBRATED), diverged);
        assertThat(e).isNotNull();
        assertThat(e.boundRatio()).isNaN();
        assertThat(e.maxError()).isNaN();
        assertThat(e.holds()).isFalse();
    }
}
