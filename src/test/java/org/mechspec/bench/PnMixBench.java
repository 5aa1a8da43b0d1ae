package org.mechspec.bench;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.mechspec.compute.BitPacking;
import org.mechspec.pnmix.CpuPackedCacheOps;
import org.mechspec.compute.HalfFloat;
import org.mechspec.pnmix.PackedKvCache;
import org.mechspec.compute.Rng;
import org.mechspec.pnmix.PairMask;
import org.mechspec.pnmix.PnMixConfig;
import org.mechspec.pnmix.RandomMasks;
import org.mechspec.pnmix.StreamingCache;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * One decode step (8 query heads, fp32) of attention on the CPU over the pn-mix packed cache (fp16 sink and
 * residual, 3/1-bit keys, 2-bit values, read packed) vs over an all-fp16 cache of the same tokens, at 4k and 32k
 * tokens, and the time to read each cache's bytes once and do nothing else (what the bytes alone cost). {@link #main}
 * runs a short measurement and prints the time ratio, the cache bytes read per token and the share of each decode that
 * reading its bytes takes.
 * Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=org.mechspec.bench.PnMixBench}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class PnMixBench {
    @Param({"4096", "32768"})
    public int tokens;

    private final CpuPackedCacheOps ops = new CpuPackedCacheOps();
    private PackedKvCache packed;
    private PackedKvCache fp16;
    private float[] q;

    @Setup(Level.Trial)
    public void setup() {
        PnMixConfig c = PnMixConfig.pinned();
        Rng rng = new Rng(42);
        PairMask mask = RandomMasks.draw(rng, 1, c.model().kvHeads(), c.model().pairs(), c.highPairsPerHead())[0];
        StreamingCache cache = new StreamingCache(c, ops, mask.channelBits(c.model().headDim(), c.model().layout(), c.cache().highBits(), c.cache().lowBits()),
                mask.bytes());
        int channels = c.model().kvChannels();
        byte[] keys = new byte[2 * tokens * channels];
        byte[] values = new byte[2 * tokens * channels];
        for (int t = 0; t < tokens; t++) {
            double[] k = row(rng, channels);
            double[] v = row(rng, channels);
            cache.append(k, v);
            for (int i = 0; i < channels; i++) {
                BitPacking.putHalf(keys, 2 * (t * channels + i), HalfFloat.toHalfBits(k[i]));
                BitPacking.putHalf(values, 2 * (t * channels + i), HalfFloat.toHalfBits(v[i]));
            }
        }
        packed = cache.view();
        fp16 = PackedKvCache.fp16(c.model().kvHeads(), c.model().headDim(), tokens, keys, values);
        q = new float[c.model().queryHeads() * c.model().headDim()];
        for (int i = 0; i < q.length; i++) {
            q[i] = (float) HalfFloat.roundToHalf(rng.normal());
        }
    }

    /** Under {@code mvn exec:java} the classes come from a class loader, not java.class.path; JMH's fork needs them there. */
    private static void forkWithThisClasspath() {
        if (Thread.currentThread().getContextClassLoader() instanceof java.net.URLClassLoader loader) {
            StringBuilder cp = new StringBuilder(System.getProperty("java.class.path"));
            for (java.net.URL u : loader.getURLs()) {
                cp.append(java.io.File.pathSeparator).append(new java.io.File(java.net.URI.create(u.toString())).getPath());
            }
            System.setProperty("java.class.path", cp.toString());
        }
    }

    private static double[] row(Rng rng, int n) {
        double[] x = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = HalfFloat.roundToHalf(rng.normal());
        }
        return x;
    }

    @Benchmark
    public float[] decodeOverPackedCache() {
        return ops.attendFp32(packed, q, 8, 1, false);
    }

    @Benchmark
    public float[] decodeOverFp16Cache() {
        return ops.attendFp32(fp16, q, 8, 1, false);
    }

    /** The floor the bytes set: every byte of the packed cache read once, 8 at a time, and nothing else. */
    @Benchmark
    public long readPackedCacheBytes() {
        return readAll(packed);
    }

    /** {@link #readPackedCacheBytes} for the fp16 cache. */
    @Benchmark
    public long readFp16CacheBytes() {
        return readAll(fp16);
    }

    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    private static long readAll(PackedKvCache c) {
        long sum = read(c.sinkKeys()) + read(c.sinkValues()) + read(c.residualKeys()) + read(c.residualValues());
        for (PackedKvCache.Group g : c.groups()) {
            sum += read(g.keys().codes()) + read(g.keys().meta()) + read(g.values().codes()) + read(g.values().meta());
        }
        return sum;
    }

    private static long read(byte[] b) {
        long sum = 0;
        int i = 0;
        for (; i + 8 <= b.length; i += 8) {
            sum += (long) LONGS.get(b, i);
        }
        for (; i < b.length; i++) {
            sum += b[i];
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        forkWithThisClasspath();
        // JMH's own options pass through (-Dexec.args="-wi 5 -i 10"): the defaults' 3 iterations leave a wide error here.
        var results = new Runner(new OptionsBuilder().parent(new org.openjdk.jmh.runner.options.CommandLineOptions(args))
                .include(PnMixBench.class.getSimpleName()).build()).run();
        for (String n : new String[] {"4096", "32768"}) {
            java.util.Map<String, RunResult> byName = new java.util.HashMap<>();
            for (RunResult r : results) {
                if (r.getParams().getParam("tokens").equals(n)) {
                    String b = r.getParams().getBenchmark();
                    byName.put(b.substring(b.lastIndexOf('.') + 1), r);
                }
            }
            if (byName.size() < 4) {
                continue; // this run left the size out (-p tokens=...)
            }
            double packedMs = byName.get("decodeOverPackedCache").getPrimaryResult().getScore();
            double fp16Ms = byName.get("decodeOverFp16Cache").getPrimaryResult().getScore();
            double readPackedMs = byName.get("readPackedCacheBytes").getPrimaryResult().getScore();
            double readFp16Ms = byName.get("readFp16CacheBytes").getPrimaryResult().getScore();
            PnMixBench b = new PnMixBench();
            b.tokens = Integer.parseInt(n);
            b.setup();
            System.out.printf(Locale.ROOT, "tokens %s: packed %.3f ms, fp16 %.3f ms, packed/fp16 time %.2f; bytes per token read: packed %.2f, fp16 %.2f (ratio %.3f)%n",
                    n, packedMs, fp16Ms, packedMs / fp16Ms, (double) b.packed.bytes() / b.tokens, (double) b.fp16.bytes() / b.tokens,
                    (double) b.packed.bytes() / b.fp16.bytes());
            System.out.printf(Locale.ROOT, "tokens %s: reading the bytes alone: packed %.3f ms (%.1f%% of its decode), fp16 %.3f ms (%.1f%% of its decode)%n",
                    n, readPackedMs, 100 * readPackedMs / packedMs, readFp16Ms, 100 * readFp16Ms / fp16Ms);
        }
    }
}
