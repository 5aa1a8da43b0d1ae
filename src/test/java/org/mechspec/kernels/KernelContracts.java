package org.mechspec.kernels;

import org.mechspec.compute.FloatArrays;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mechspec.spec.Properties.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;
import org.mechspec.spec.AttentionRegimes;
import org.mechspec.spec.Contract;
import org.mechspec.spec.FlashRule;
import org.mechspec.spec.PropertyRun;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;
import org.mechspec.spec.Stress;

@Tag("kernels")
class KernelContracts {
    private static final String PAPER = "kernels";

    @Contract(paper = PAPER, check = "rng_pinned_test_vector")
    @Seeded
    void rngTestVector(SeedRun run) {
        // The vector is pinned for seed 42 only; every seed checks that the stream is a pure function of it.
        boolean vector = KernelChecks.rngMatchesTestVector(new Rng(42), new Rng(42));
        Rng a = new Rng(run.seed());
        Rng b = new Rng(run.seed());
        boolean replay = true;
        for (int i = 0; i < 1000; i++) {
            replay &= Double.doubleToLongBits(a.normal()) == Double.doubleToLongBits(b.normal()) && a.next() == b.next();
        }
        assertThat(vector).as("seed 42 reproduces rng.md's test vector").isTrue();
        assertThat(replay).as("same seed, same stream").isTrue();
    }

    @Contract(paper = PAPER, check = "rng_pinned_test_vector")
    @Test
    void rngUniformsInUnitIntervalAndShufflesArePermutations() {
        qt().withExamples(Stress.examples(200)).forAll(longs().all(), integers().between(1, 300)).checkAssert((seed, n) -> {
            Rng r = new Rng(seed);
            double u = r.uniform();
            assertThat(u).isGreaterThanOrEqualTo(0.0).isLessThan(1.0);
            int[] p = r.permutation(n);
            assertThat(p).containsExactlyInAnyOrder(java.util.stream.IntStream.range(0, n).toArray());
        });
    }

    @Contract(paper = PAPER, check = "fp16_round_nearest_even_exhaustive")
    @Seeded
    void fp16Exhaustive(SeedRun run) {
        int mismatches = KernelChecks.halfMismatches(run.backend());
        run.metric("fp16_mismatches", (long) mismatches);
        run.check(); // fp16_mismatches = 0
    }

    @Contract(paper = PAPER, check = "bf16_round_nearest_even_exhaustive")
    @Seeded
    void bf16Exhaustive(SeedRun run) {
        int mismatches = KernelChecks.bfloat16Mismatches(run.backend());
        run.metric("bf16_mismatches", (long) mismatches);
        run.check(); // bf16_mismatches = 0
    }

    @Contract(paper = PAPER, check = "fp16_round_nearest_even_exhaustive")
    @Test
    void fp16RoundingIsNearestAndIdempotent(PropertyRun run) {
        Backend subject = run.backend();
        qt().withExamples(Stress.examples(2000)).forAll(doubles().between(-70000, 70000)).checkAssert(x -> {
            double h = subject.roundToHalf(new double[] {x})[0];
            // An fp16 value by the definition's own rounding, and one the subject leaves as it is.
            assertThat(HalfFloat.roundToHalf(h)).isEqualTo(h);
            assertThat(subject.roundToHalf(new double[] {h})[0]).isEqualTo(h);
            if (Double.isFinite(h)) {
                double up = HalfFloat.fromHalfBits((short) (HalfFloat.toHalfBits(Math.abs(h)) + 1));
                double down = Math.abs(h) == 0 ? 0 : HalfFloat.fromHalfBits((short) (HalfFloat.toHalfBits(Math.abs(h)) - 1));
                // Nearest: within half the gap to the neighbour on x's side of h.
                double gap = Math.abs(x) >= Math.abs(h) ? up - Math.abs(h) : Math.abs(h) - down;
                Stress.figure("distance_to_nearest", Math.abs(Math.abs(x) - Math.abs(h)), "<=", gap / 2, () -> x);
                assertThat(Math.abs(Math.abs(x) - Math.abs(h))).isLessThanOrEqualTo(gap / 2);
            }
        });
    }

    @Contract(paper = PAPER, check = "attention_fp64_flash_rule")
    @Seeded(gpu = true)
    @Tag("gpu")
    void attentionFp64(SeedRun run) {
        FlashRule.Verdict worst = null;
        java.util.Map<String, FlashRule.Verdict> verdicts = new java.util.LinkedHashMap<>();
        for (boolean bias : new boolean[] {false, true}) {
            for (boolean causal : new boolean[] {false, true}) {
                FlashRule.Verdict v = KernelChecks.attentionFp64(run.backend(), KernelChecks.attentionCase(run.seed(), bias, causal));
                verdicts.put("bias=" + bias + " causal=" + causal, v);
                worst = worst == null || v.maxError() > worst.maxError() ? v : worst;
            }
        }
        for (boolean causal : new boolean[] {false, true}) {
            FlashRule.Verdict v = KernelChecks.attentionFp64(run.backend(), KernelChecks.longKeysCase(run.seed(), causal));
            verdicts.put("7001 keys causal=" + causal, v);
            worst = v.maxError() > worst.maxError() ? v : worst;
        }
        // Record first, so a failing case still reports its figures; then every case must hold.
        run.metric("attention_fp64_max_error", worst.maxError()).metric("attention_fp64_bound", worst.bound());
        verdicts.forEach((which, v) -> assertThat(v.holds()).as("fp64 attention %s: %s", which, v).isTrue());
    }

    @Contract(paper = PAPER, check = "attention_fp32_flash_rule")
    @Seeded(gpu = true)
    @Tag("gpu")
    void attentionFp32(SeedRun run) {
        FlashRule.Verdict worst = null;
        java.util.Map<String, FlashRule.Verdict> verdicts = new java.util.LinkedHashMap<>();
        for (boolean bias : new boolean[] {false, true}) {
            for (boolean causal : new boolean[] {false, true}) {
                FlashRule.Verdict v = KernelChecks.attentionFp32(run.backend(), KernelChecks.attentionCase(run.seed(), bias, causal));
                verdicts.put("bias=" + bias + " causal=" + causal, v);
                worst = worst == null || v.maxError() > worst.maxError() ? v : worst;
            }
        }
        for (boolean causal : new boolean[] {false, true}) {
            FlashRule.Verdict v = KernelChecks.attentionFp32(run.backend(), KernelChecks.longKeysCase(run.seed(), causal));
            verdicts.put("7001 keys causal=" + causal, v);
            worst = v.maxError() > worst.maxError() ? v : worst;
        }
        // Record first, so a failing case still reports its figures; then every case must hold.
        run.metric("attention_fp32_max_error", worst.maxError()).metric("attention_fp32_bound", worst.bound());
        verdicts.forEach((which, v) -> assertThat(v.holds()).as("fp32 attention %s: %s", which, v).isTrue());
    }

    /** Property half: the run's fp32 attention within the forward error bound, over every adversarial regime and shape. */
    @Contract(paper = PAPER, check = "attention_fp32_flash_rule")
    @Test
    void fp32AttentionWithinBoundOverRegimes(PropertyRun run) {
        fp32WithinBoundOverRegimes(run.backend());
    }

    /** Property half: the run's fp64 attention within the forward error bound, over every adversarial regime and shape. */
    @Contract(paper = PAPER, check = "attention_fp64_flash_rule")
    @Test
    void fp64AttentionWithinBoundOverRegimes(PropertyRun run) {
        fp64WithinBoundOverRegimes(run.backend());
    }

    /**
     * fp64 attention against the fp64 definition (the CPU oracle) on {@link AttentionRegimes}: within the forward error
     * bound of an fp64 computation plus the oracle's own, never NaN or infinite.
     */
    static void fp64WithinBoundOverRegimes(Backend subject) {
        fp64WithinBoundOverRegimes(subject, Stress.examples(60), AttentionRegimes.BUDGET);
    }

    static void fp64WithinBoundOverRegimes(Backend subject, int examples, long budget) {
        qt().withExamples(examples).forAll(AttentionRegimes.cases(budget)).checkAssert(c -> {
            double[] oracle = CpuBackend.INSTANCE.attention(c.shape(), c.q(), c.k(), c.v(), c.bias());
            double[] out = subject.attention(c.shape(), c.q(), c.k(), c.v(), c.bias());
            AttentionRegimes.judgeWithinBound("attention_fp64_max_error", out, oracle, 2 * AttentionRegimes.errorBound(c, FlashRule.FP64_UNIT_ROUNDOFF), c);
        });
    }

    /** As {@link #fp64WithinBoundOverRegimes}, on the inputs rounded to fp32, within an fp32 computation's bound. */
    static void fp32WithinBoundOverRegimes(Backend subject) {
        fp32WithinBoundOverRegimes(subject, Stress.examples(60), AttentionRegimes.BUDGET);
    }

    static void fp32WithinBoundOverRegimes(Backend subject, int examples, long budget) {
        qt().withExamples(examples).forAll(AttentionRegimes.cases(budget)).checkAssert(c -> {
            float[] q = FloatArrays.narrow(c.q());
            float[] k = FloatArrays.narrow(c.k());
            float[] v = FloatArrays.narrow(c.v());
            float[] bias = c.bias() == null ? null : FloatArrays.narrow(c.bias());
            AttentionRegimes.Case c32 = new AttentionRegimes.Case(c.regime(), c.shape(), FloatArrays.widen(q), FloatArrays.widen(k),
                    FloatArrays.widen(v), bias == null ? null : FloatArrays.widen(bias));
            double[] oracle = CpuBackend.INSTANCE.attention(c.shape(), c32.q(), c32.k(), c32.v(), c32.bias());
            double[] out = FloatArrays.widen(subject.attention(c.shape(), q, k, v, bias));
            double bound = AttentionRegimes.errorBound(c32, FlashRule.FP32_UNIT_ROUNDOFF) + AttentionRegimes.errorBound(c32, FlashRule.FP64_UNIT_ROUNDOFF);
            AttentionRegimes.judgeWithinBound("attention_fp32_max_error", out, oracle, bound, c32);
        });
    }

}
