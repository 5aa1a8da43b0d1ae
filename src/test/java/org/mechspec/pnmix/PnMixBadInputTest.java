package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.data.DataFiles;
import org.mechspec.data.DataFiles.MissingDataException;

/** Bad input gets a clear exception naming the cause, never a NaN metric or a silent substitute. */
@Tag("pn-mix")
class PnMixBadInputTest {

    private static <T> T withDataDir(Path dir, java.util.function.Supplier<T> body) {
        String before = System.getProperty("mechspec.data.dir");
        System.setProperty("mechspec.data.dir", dir.toString());
        try {
            return body.get();
        } finally {
            if (before == null) {
                System.clearProperty("mechspec.data.dir");
            } else {
                System.setProperty("mechspec.data.dir", before);
            }
        }
    }

    @Test
    void absentHamletSkipsNamingTheFileAndTheFlag(@TempDir Path empty) {
        assertThatThrownBy(() -> withDataDir(empty, () -> PnMixExperiment.run(42, CpuBackend.INSTANCE)))
                .isInstanceOf(MissingDataException.class)
                .hasMessageContaining("hamlet/hamlet.txt").hasMessageContaining("-Dmechspec.data.dir")
                .hasMessageContaining("gutenberg.org/ebooks/1524");
    }

    @Test
    void hamletWithOtherBytesFailsClearly(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("hamlet"));
        Files.writeString(dir.resolve("hamlet/hamlet.txt"), "To be, or not to be: a different rendition.", StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> withDataDir(dir, () -> HamletTokens.first(448)))
                .isInstanceOf(DataFiles.DataIntegrityException.class)
                .hasMessageContaining("SHA-256").hasMessageContaining(HamletTokens.SHA256);
    }

    @Test
    void bitWidthsOutsideOneToEightAreRejected() {
        PnMixConfig p = PnMixConfig.pinned();
        assertThatThrownBy(() -> p.withKeyBits(9, 1)).hasMessageContaining("highBits must be 1..8 bits, got 9");
        assertThatThrownBy(() -> p.withKeyBits(3, 0)).hasMessageContaining("lowBits must be 1..8 bits, got 0");
        assertThatThrownBy(() -> KeyPlan.uniform(0)).hasMessageContaining("1..8 bits");
        CpuPackedCacheOps ops = new CpuPackedCacheOps();
        assertThatThrownBy(() -> ops.quantizePerChannel(new double[4], 2, new int[] {3, 9}, OneBitLevels.CONDITIONAL_MEANS))
                .hasMessageContaining("channel 1 must be 1..8 bits, got 9");
        assertThatThrownBy(() -> ops.packPerToken(new int[4], 2, 2, 2, 0)).hasMessageContaining("1..8 bits, got 0");
        assertThatThrownBy(() -> BitPacking.streamBytes(4, 12)).hasMessageContaining("1..8 bits, got 12");
        assertThatThrownBy(() -> ops.packPerChannel(new int[] {4}, 1, new int[] {2})).hasMessageContaining("does not fit in 2 bits");
    }

    @Test
    void ratiosOutsideTheUnitIntervalAreRejected() {
        for (double ratio : List.of(-0.1, 1.5, Double.NaN)) {
            assertThatThrownBy(() -> config(ratio, 128, 128, 128)).hasMessageContaining("highRatio must be in [0, 1], got " + ratio);
        }
        assertThat(config(0.0, 128, 128, 128).highPairsPerHead()).isZero();
        assertThat(config(1.0, 128, 128, 128).highPairsPerHead()).isEqualTo(16);
    }

    @Test
    void groupsThatDoNotDivideAreRejected() {
        assertThatThrownBy(() -> config(0.5, 96, 128, 128)).hasMessageContaining("groupSize 96 does not divide residualSize 128");
        assertThatThrownBy(() -> config(0.5, 128, 128, 12)).hasMessageContaining("value group of 12 channels does not divide headDim 32");
        assertThatThrownBy(() -> new CpuPackedCacheOps().packPerToken(new int[10], 1, 10, 4, 2))
                .hasMessageContaining("value group of 4 channels does not divide 10 channels");
    }

    @Test
    void nonFiniteOrNonHalfRowsAndBadShapesAreRejected() {
        PnMixConfig c = PnMixConfig.pinned();
        assertThatThrownBy(() -> new StreamingCache(c, new CpuPackedCacheOps(), new int[64], new byte[4]))
                .hasMessageContaining("key channel must be 1..8 bits, got 0");
        StreamingCache ok = new StreamingCache(c, new CpuPackedCacheOps(), filled(64, 2), new byte[4]);
        double[] nan = new double[64];
        nan[5] = Double.NaN;
        assertThatThrownBy(() -> ok.append(nan, new double[64])).hasMessageContaining("k[5] = NaN is not a finite fp16 value");
        double[] notHalf = new double[64];
        notHalf[0] = 0.1;
        assertThatThrownBy(() -> ok.append(new double[64], notHalf)).hasMessageContaining("v[0] = 0.1 is not a finite fp16 value");
        assertThatThrownBy(() -> ok.append(new double[63], new double[64])).hasMessageContaining("k row has 63 values");
        ok.append(new double[64], new double[64]);
        PackedKvCache view = ok.view();
        assertThatThrownBy(() -> new CpuPackedCacheOps().attend(view, new double[32], 8, 1, false, false))
                .hasMessageContaining("q has 32 elements, shape needs 256");
        assertThatThrownBy(() -> new CpuPackedCacheOps().attend(view, new double[160], 5, 1, false, false))
                .hasMessageContaining("queryHeads (5) must be a positive multiple of kvHeads (2)");
    }

    private static int[] filled(int n, int v) {
        int[] a = new int[n];
        java.util.Arrays.fill(a, v);
        return a;
    }

    private static PnMixConfig config(double ratio, int group, int residual, int valueGroup) {
        return new PnMixConfig(new PnMixConfig.Model(256, 256, 8, 2, 32, 10000.0, PairLayout.ADJACENT),
                new PnMixConfig.CachePolicy(32, group, residual, ratio, 3, 1, 2, valueGroup, OneBitLevels.CONDITIONAL_MEANS), new PnMixConfig.Tokens(384, 64));
    }
}
