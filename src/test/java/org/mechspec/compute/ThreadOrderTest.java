package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.data.DataFiles;
import org.mechspec.kernels.KernelChecks;

/**
 * A race shows as results that depend on the order threads run in. The emulated driver runs a block's threads in
 * order 0, 1, 2, … or, with MECHSPEC_EMU_THREAD_ORDER=reverse, backwards, or with shuffle:SEED in a permutation drawn
 * afresh for every barrier phase (blocks start in a permuted order too): the project's kernels give bit-identical
 * results in every order, and deliberately racy kernels do not — one of them only in a shuffled order. A shuffle is
 * reproducible from the seed the driver prints; adversarial math (MECHSPEC_EMU_MATH=adversarial:SEED) changes the
 * bits of the kernels that call exp, the same bits in every order.
 */
@Tag("cuda")
@Tag("emulator-process")
@Tag("platform")
class ThreadOrderTest {
    private static final Pattern SEED_LINE = Pattern.compile(
            "mechspec CUDA emulator: thread order shuffled, seed (\\d+) \\(MECHSPEC_EMU_THREAD_ORDER=shuffle:(\\d+) reproduces it\\)");

    @BeforeEach
    void needsTheEmulator() {
        assumeThat(ChildJvm.emulator()).as("the emulated driver was not built (no g++)").isNotNull();
        assumeThat(KernelImages.built()).as("nvcc was not found at build time").isTrue();
    }

    @Test
    void raceFreeKernelsGiveTheSameBitsInEveryOrderAndRacyOnesDoNot() throws Exception {
        Map<String, String> forward = fingerprints("forward", "host").prints();
        Map<String, String> reverse = fingerprints("reverse", "host").prints();
        Map<String, String> shuffled = fingerprints("shuffle:1", "host").prints();
        Map<String, String> reshuffled = fingerprints("shuffle:2", "host").prints();
        assertThat(forward.keySet()).contains("attention_f32", "attention_f64", "round_half_f64", "selftest_reverse_sensitive",
                "selftest_order_sensitive");
        for (String kernel : forward.keySet()) {
            if (!kernel.startsWith("selftest_")) {
                assertThat(reverse.get(kernel)).as(kernel + " reversed").isEqualTo(forward.get(kernel));
                assertThat(shuffled.get(kernel)).as(kernel + " shuffled").isEqualTo(forward.get(kernel));
                assertThat(reshuffled.get(kernel)).as(kernel + " shuffled with another seed").isEqualTo(forward.get(kernel));
            }
        }
        String last = "selftest_reverse_sensitive";
        assertThat(reverse.get(last)).as("the last writer wins: reversed").isNotEqualTo(forward.get(last));
        assertThat(shuffled.get(last)).as("the last writer wins: shuffled").isNotEqualTo(forward.get(last));
        String middle = "selftest_order_sensitive";
        assertThat(reverse.get(middle)).as("a race neither plain order shows").isEqualTo(forward.get(middle));
        assertThat(shuffled.get(middle)).as("a shuffled order shows it").isNotEqualTo(forward.get(middle));
    }

    @Test
    void aShuffleWithoutASeedPrintsTheSeedThatReplaysIt() throws Exception {
        Fingerprints.Run first = fingerprints("shuffle", "host");
        Matcher m = SEED_LINE.matcher(first.output());
        assertThat(m.find()).as(first.output()).isTrue();
        assertThat(m.group(2)).isEqualTo(m.group(1));
        assertThat(SEED_LINE.matcher(first.output()).results().count()).as("printed once, at the first launch").isEqualTo(1);
        Fingerprints.Run replay = fingerprints("shuffle:" + m.group(1), "host");
        assertThat(replay.prints()).as("racy kernels included").isEqualTo(first.prints());
    }

    @Test
    void adversarialMathChangesTheBitsOfKernelsThatCallExpTheSameInEveryOrder() throws Exception {
        Map<String, String> host = fingerprints("forward", "host").prints();
        Fingerprints.Run adversarial = fingerprints("forward", "adversarial:7");
        Map<String, String> shuffled = fingerprints("shuffle:3", "adversarial:7").prints();
        assertThat(adversarial.output()).contains("math functions perturbed within CUDA's ulp bounds, seed 7 "
                + "(MECHSPEC_EMU_MATH=adversarial:7 reproduces it)");
        for (String kernel : new String[] {"attention_f32", "attention_f64"}) {
            assertThat(adversarial.prints().get(kernel)).as(kernel + ": exp and expf perturbed").isNotEqualTo(host.get(kernel));
            assertThat(shuffled.get(kernel)).as(kernel + ": a fixed function of its inputs").isEqualTo(adversarial.prints().get(kernel));
        }
        assertThat(adversarial.prints().get("round_half_f64")).as("no math function").isEqualTo(host.get("round_half_f64"));
    }

    /** A child JVM's fingerprints with the emulator's thread order and math mode set. */
    private static Fingerprints.Run fingerprints(String order, String math) throws Exception {
        ChildJvm.Result r = ChildJvm.run(ChildJvm.emulated(Map.of("MECHSPEC_EMU_THREAD_ORDER", order, "MECHSPEC_EMU_MATH", math)),
                Fingerprints.class.getName());
        assertThat(r.exit()).as(r.output()).isZero();
        Map<String, String> out = new java.util.TreeMap<>();
        r.output().lines().filter(l -> l.startsWith("fingerprint ")).map(l -> l.split(" ")).forEach(p -> out.put(p[1], p[2]));
        return new Fingerprints.Run(out, r.output());
    }

    /** Prints "fingerprint KERNEL SHA-256" of each kernel's output on fixed inputs. */
    public static final class Fingerprints {
        record Run(Map<String, String> prints, String output) {
        }

        public static void main(String[] args) {
            CudaBackend cuda = Backends.forContract(true).stream().filter(CudaBackend.class::isInstance)
                    .map(CudaBackend.class::cast).findFirst().orElseThrow(() -> new IllegalStateException(DeviceProbe.unavailableReason()));
            KernelChecks.AttentionCase c = KernelChecks.attentionCase(42, true, true);
            print("attention_f32", bytes(cuda.attention(c.shape(), c.q(), c.k(), c.v(), c.bias())));
            print("attention_f64", bytes(cuda.attention(c.shape(), c.qd(), c.kd(), c.vd(), c.biasd())));
            print("round_half_f64", bytes(cuda.roundToHalf(KernelChecks.roundingCases(KernelChecks.Format.FP16).inputs())));
            // One block of 256 threads all writing y[0]: the last one to run wins.
            print("selftest_reverse_sensitive", bytes(racy(cuda, "selftest_reverse_sensitive", 1, 256)));
            // 64 blocks of 3 threads: block b's middle thread writes 2 to y[b], the others 1.
            print("selftest_order_sensitive", bytes(racy(cuda, "selftest_order_sensitive", 64, 3)));
        }

        private static float[] racy(CudaBackend cuda, String kernel, int blocks, int threads) {
            float[] y = new float[blocks];
            try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
                CUdeviceptr dy = b.poisoned((long) blocks * Sizeof.FLOAT);
                cuda.launch("emulator_selftest", kernel, blocks, threads, 0, new KernelArgs().ptr(dy));
                JCudaDriver.cuMemcpyDtoH(Pointer.to(y), dy, (long) blocks * Sizeof.FLOAT);
            }
            return y;
        }

        private static void print(String kernel, byte[] data) {
            System.out.println("fingerprint " + kernel + " " + DataFiles.sha256(data));
        }

        private static byte[] bytes(double[] x) {
            ByteBuffer b = ByteBuffer.allocate(8 * x.length);
            b.asDoubleBuffer().put(x);
            return b.array();
        }

        private static byte[] bytes(float[] x) {
            ByteBuffer b = ByteBuffer.allocate(4 * x.length);
            b.asFloatBuffer().put(x);
            return b.array();
        }
    }
}
