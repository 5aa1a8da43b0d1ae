package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.ByteBuffer;
import java.util.Map;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.data.DataFiles;
import org.mechspec.kernels.KernelChecks;

/**
 * A race shows as results that depend on the order threads run in. The emulated driver runs a block's threads
 * in order 0, 1, 2, … or, with MECHSPEC_EMU_THREAD_ORDER=reverse, backwards (blocks too): the project's kernels
 * give bit-identical results both ways, and a deliberately racy kernel does not.
 */
@Tag("cuda")
@Tag("platform")
class ThreadOrderTest {
    @Test
    void kernelsGiveTheSameBitsInEitherThreadOrderAndARacyOneDoesNot() throws Exception {
        assumeThat(ChildJvm.emulator()).as("the emulated driver was not built (no g++)").isNotNull();
        assumeThat(KernelImages.built()).as("nvcc was not found at build time").isTrue();
        ChildJvm.Result forward = ChildJvm.run(ChildJvm.emulated(Map.of()), Fingerprints.class.getName());
        ChildJvm.Result reverse = ChildJvm.run(ChildJvm.emulated(Map.of("MECHSPEC_EMU_THREAD_ORDER", "reverse")),
                Fingerprints.class.getName());
        assertThat(forward.exit()).as(forward.output()).isZero();
        assertThat(reverse.exit()).as(reverse.output()).isZero();
        Map<String, String> f = lines(forward.output());
        Map<String, String> r = lines(reverse.output());
        assertThat(f.keySet()).contains("attention_f32", "attention_f64", "round_half_f64", "selftest_reverse_sensitive");
        for (String kernel : f.keySet()) {
            if (kernel.equals("selftest_reverse_sensitive")) {
                assertThat(r.get(kernel)).as("the racy control kernel").isNotEqualTo(f.get(kernel));
            } else {
                assertThat(r.get(kernel)).as(kernel).isEqualTo(f.get(kernel));
            }
        }
    }

    private static Map<String, String> lines(String output) {
        Map<String, String> out = new java.util.TreeMap<>();
        output.lines().filter(l -> l.startsWith("fingerprint ")).map(l -> l.split(" ")).forEach(p -> out.put(p[1], p[2]));
        return out;
    }

    /** Prints "fingerprint KERNEL SHA-256" of each kernel's output on fixed inputs. */
    public static final class Fingerprints {
        public static void main(String[] args) {
            CudaBackend cuda = Backends.forContract(true).stream().filter(CudaBackend.class::isInstance)
                    .map(CudaBackend.class::cast).findFirst().orElseThrow(() -> new IllegalStateException(DeviceProbe.unavailableReason()));
            KernelChecks.AttentionCase c = KernelChecks.attentionCase(42, true, true);
            print("attention_f32", bytes(cuda.attention(c.shape(), c.q(), c.k(), c.v(), c.bias())));
            print("attention_f64", bytes(cuda.attention(c.shape(), c.qd(), c.kd(), c.vd(), c.biasd())));
            print("round_half_f64", bytes(cuda.roundToHalf(KernelChecks.roundingCases(KernelChecks.Format.FP16).inputs())));
            float[] y = new float[1];
            try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
                CUdeviceptr dy = b.poisoned(Sizeof.FLOAT);
                cuda.launch("emulator_selftest", "selftest_reverse_sensitive", 1, 256, 0, new KernelArgs().ptr(dy));
                JCudaDriver.cuMemcpyDtoH(Pointer.to(y), dy, Sizeof.FLOAT);
            }
            print("selftest_reverse_sensitive", bytes(y));
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
