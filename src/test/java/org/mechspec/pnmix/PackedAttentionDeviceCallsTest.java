package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import jcuda.LogLevel;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.Rng;

/**
 * How many driver calls one packed-attention call of the pn-mix protocol makes (seed 42, the mechanism's run), counted
 * from JCuda's own trace of every driver call ("Executing cuMemAlloc ...") in a child JVM on the emulated driver. The
 * trace is switched on only inside the mechanism's attention calls, so the quantize, pack and reference calls of the
 * protocol are not counted. The cache stays on the device across calls: allocations and frees are rare (a new
 * group, a longer scratch buffer), not several per call.
 */
@Tag("cuda")
@Tag("emulator-process")
@Tag("pn-mix")
class PackedAttentionDeviceCallsTest {
    @Test
    void packedAttentionKeepsTheCacheOnTheDeviceAcrossCalls() throws Exception {
        assumeThat(EmulatedChild.available()).as("the emulated driver or the kernels were not built").isTrue();
        Path hamlet = Path.of(System.getProperty("mechspec.data.dir", "../shared/data"), HamletTokens.FILE);
        assumeThat(Files.exists(hamlet)).as("%s is missing (-Dmechspec.data.dir)", hamlet).isTrue();
        EmulatedChild.Result r = EmulatedChild.run(Map.of(), Protocol.class.getName());
        assertThat(r.exit()).as(r.output()).isZero();
        Map<String, Integer> calls = driverCalls(r.output());
        int attentionCalls = r.output().lines().filter(l -> l.startsWith("traced_attention_calls ")).mapToInt(l -> Integer.parseInt(l.split(" ")[1]))
                .findFirst().orElseThrow(() -> new AssertionError(r.output()));
        System.out.printf("pn-mix seed 42, %d packed-attention calls, driver calls per call:%n", attentionCalls);
        calls.forEach((name, n) -> System.out.printf("  %-22s %6d  %.2f per call%n", name, n, n / (double) attentionCalls));
        assertThat(attentionCalls).isEqualTo(66); // 1 after prefill + 64 decode steps + 1 batched call
        // The cache is uploaded when its groups change (the first call and one flush), not on every call.
        assertThat(calls.getOrDefault("cuMemAlloc", 0)).as("allocations over %d calls", attentionCalls).isLessThan(attentionCalls);
        assertThat(calls.getOrDefault("cuMemFree", 0)).as("frees over %d calls", attentionCalls).isLessThan(attentionCalls);
        // Per call: the query, the dims and the fp16 residual (keys, values) go up; the output and logits come back.
        assertThat(calls.getOrDefault("cuMemcpyHtoD", 0)).as("copies to the device").isLessThanOrEqualTo(5 * attentionCalls);
    }

    /** Counts of each driver entry point in JCuda's trace lines. */
    static Map<String, Integer> driverCalls(String output) {
        Map<String, Integer> counts = new TreeMap<>();
        output.lines().filter(l -> l.startsWith("Executing cu")).map(l -> l.substring("Executing ".length()).split(" ")[0])
                .forEach(name -> counts.merge(name, 1, Integer::sum));
        return counts;
    }

    /** The child: pn-mix's mechanism run for seed 42 on the emulated driver, tracing driver calls inside its attention calls. */
    public static final class Protocol {
        public static void main(String[] args) {
            CudaBackend cuda = CudaBackend.get();
            PnMixConfig config = PnMixConfig.pinned();
            Rng rng = new Rng(42);
            Projections truth = new RandomRopeLayer(rng, config).project(HamletTokens.first(config.totalTokens()).bytes());
            Traced traced = new Traced(PackedCacheOps.forBackend(cuda));
            new PnMixProtocol(config, traced, true).run(truth, KeyPlan.saliency());
            System.out.println("traced_attention_calls " + traced.calls);
        }
    }

    /** Traces the driver calls of attention over the mechanism's cache (the fp16 reference caches have no sink). */
    private static final class Traced extends ForwardingPackedCacheOps {
        int calls;

        Traced(PackedCacheOps inner) {
            super(inner);
        }

        @Override
        public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits) {
            if (cache.sinkTokens() == 0) {
                return inner.attend(cache, q, queryHeads, queryLen, causal, withLogits);
            }
            calls++;
            JCudaDriver.setLogLevel(LogLevel.LOG_TRACE);
            try {
                return inner.attend(cache, q, queryHeads, queryLen, causal, withLogits);
            } finally {
                JCudaDriver.setLogLevel(LogLevel.LOG_ERROR);
            }
        }
    }
}
