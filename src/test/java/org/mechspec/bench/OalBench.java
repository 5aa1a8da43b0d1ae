package org.mechspec.bench;

import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.mechspec.oal.CpuGroupedQuadraticAttention;
import org.mechspec.oal.QuadraticAttentionShape;
import org.mechspec.compute.Rng;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Grouped-quadratic attention on the CPU, fp32: the dense form (O(T²·d)) against the recurrent form
 * (O(T·d²·d) state work) at the fixture's head shape (4 query heads over 2 KV heads of dim 32, G = 3).
 * Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=org.mechspec.bench.OalBench}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class OalBench {
    @Param({"32", "512"})
    int seqLen;

    QuadraticAttentionShape shape;
    float[] q;
    float[] k;
    float[] v;
    float[] m;
    int[] groups;

    @Setup
    public void setup() {
        Rng rng = new Rng(1);
        shape = new QuadraticAttentionShape(1, seqLen, 4, 2, 32, 3);
        q = floats(rng, shape.queryElements(), 0.5);
        k = floats(rng, shape.keyElements(), 0.5);
        v = floats(rng, shape.keyElements(), 1.0);
        groups = new int[shape.groupElements()];
        for (int i = 0; i < groups.length; i++) {
            groups[i] = (i % 32) < 2 ? 1 : (i % 32) < 8 ? 2 : 0;
        }
        m = new float[shape.coefficientElements()];
        for (int h = 0; h < 4; h++) {
            for (int a = 0; a < 4; a++) {
                for (int b = 0; b < 4; b++) {
                    m[h * 16 + a * 4 + b] = a == 0 && b == 0 ? 1f : 0.5f;
                }
            }
        }
    }

    private static float[] floats(Rng rng, int n, double std) {
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            out[i] = (float) (std * rng.normal());
        }
        return out;
    }

    @Benchmark
    public float[] dense() {
        return CpuGroupedQuadraticAttention.INSTANCE.dense(shape, q, k, v, groups, m);
    }

    @Benchmark
    public float[] recurrent() {
        return CpuGroupedQuadraticAttention.INSTANCE.recurrent(shape, q, k, v, groups, m);
    }

    public static void main(String[] args) throws RunnerException {
        // In-process: under exec:java a forked JVM would not see the test classpath.
        Collection<RunResult> results = new Runner(new OptionsBuilder().include(OalBench.class.getName()).forks(0).build()).run();
        for (RunResult r : results) {
            System.out.printf("%s T=%s: %.1f calls/s (%.0f tokens/s)%n", r.getParams().getBenchmark(),
                    r.getParams().getParam("seqLen"), r.getPrimaryResult().getScore(),
                    r.getPrimaryResult().getScore() * Integer.parseInt(r.getParams().getParam("seqLen")));
        }
    }
}
