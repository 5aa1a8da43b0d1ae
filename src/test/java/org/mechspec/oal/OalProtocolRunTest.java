package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.stream.DoubleStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;
import org.mechspec.data.TokenBlocks;
import org.mechspec.model.Batch;
import org.mechspec.oal.BlockLedger.Phase;
import org.mechspec.oal.BlockLedger.Split;

/**
 * One protocol run on the tiny 5-layer model (30 validation and 5 test blocks of text): what its ledger records and
 * how its evaluation turns per-token NLLs into the OAL − softmax interval.
 */
@Tag("oal")
class OalProtocolRunTest {
    private static final byte[] VALIDATION = TinyOal.text(1, 32 * 30);
    private static final byte[] TEST = TinyOal.text(2, 32 * 5);

    /** One protocol run of seed 42, about 4 s; each test makes its own (PIT credits a @BeforeAll run to one test only). */
    private static OalRun tinyRun() {
        return OalProtocol.run(42, CpuBackend.INSTANCE, TinyOal.model(3, 5),
                TokenBlocks.ofBytes(VALIDATION, OalProtocol.SEQUENCE_LENGTH), TokenBlocks.ofBytes(TEST, OalProtocol.SEQUENCE_LENGTH));
    }

    /**
     * Catches the selection of calibration starts going unrecorded: the ledger lists, in order, grouping,
     * calibration, selection (the grouping blocks again, validation split), validation, adaptation and evaluation.
     */
    @Test
    void ledgerRecordsTheSelectionOnTheGroupingBlocks() {
        OalRun run = tinyRun();
        List<BlockLedger.Use> uses = run.ledger().uses();
        assertThat(uses).extracting(BlockLedger.Use::phase).containsExactly(Phase.GROUPING, Phase.CALIBRATION,
                Phase.SELECTION, Phase.VALIDATION, Phase.ADAPTATION, Phase.EVALUATION);
        BlockLedger.Use selection = uses.get(2);
        assertThat(selection.order()).isEqualTo(2);
        assertThat(selection.split()).isEqualTo(Split.VALIDATION);
        assertThat(selection.blocks()).containsExactly(run.roles().grouping());
        assertThat(uses.get(0).blocks()).containsExactly(run.roles().grouping());
        assertThat(uses.get(1).blocks()).containsExactly(run.roles().calibration());
        assertThat(uses.get(5).split()).isEqualTo(Split.TEST);
        assertThat(uses.get(5).blocks()).containsExactly(run.roles().test());
    }

    /**
     * Catches the bootstrap being fed anything but converted − softmax per token (a sum, or nothing): the per-token
     * NLLs recomputed here from both adapted models on the test blocks are the run's, and the 95% interval is a
     * proper interval inside the range of the differences that brackets their mean; the run's clock is its wall time.
     */
    @Test
    void nllIntervalBracketsTheMeanOfConvertedMinusSoftmax() {
        long start = System.nanoTime();
        OalRun run = tinyRun();
        double wallSeconds = (System.nanoTime() - start) / 1e9;
        Batch test = Batch.nextToken(TokenBlocks.ofBytes(TEST, OalProtocol.SEQUENCE_LENGTH).blocks(run.roles().test()),
                OalProtocol.SEQUENCE_LENGTH);
        double[] softmax = run.adaptation().adapted().softmax().forward(test).tokenNll();
        double[] converted = run.adaptation().adapted().converted().forward(test).tokenNll();
        assertThat(run.evaluation().softmaxTokenNll()).containsExactly(softmax);
        assertThat(run.evaluation().oalTokenNll()).containsExactly(converted);

        double[] diff = new double[softmax.length];
        for (int i = 0; i < diff.length; i++) {
            diff[i] = converted[i] - softmax[i];
        }
        double mean = DoubleStream.of(diff).sum() / diff.length;
        assertThat(mean).isNotZero();
        assertThat(run.evaluation().oalNll() - run.evaluation().softmaxNll()).isCloseTo(mean, within(1e-12));

        double low = run.evaluation().nllDifferenceLow();
        double high = run.evaluation().nllDifferenceHigh();
        assertThat(low).isLessThan(high);
        assertThat(mean).isBetween(low, high);
        assertThat(low).isGreaterThanOrEqualTo(DoubleStream.of(diff).min().orElseThrow());
        assertThat(high).isLessThanOrEqualTo(DoubleStream.of(diff).max().orElseThrow());

        // A wrong clock (start added, or nanoseconds multiplied) is not positive and at most the wall time around the run.
        assertThat(run.elapsedSeconds()).isPositive().isLessThanOrEqualTo(wallSeconds);
    }
}
