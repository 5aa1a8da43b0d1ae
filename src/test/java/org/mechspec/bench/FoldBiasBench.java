package org.mechspec.bench;

import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.CpuBackend;
import org.mechspec.foldbias.FoldBias;
import org.mechspec.foldbias.FoldBiasConfig;
import org.mechspec.foldbias.FoldBiasInputs;
import org.mechspec.foldbias.FoldBiasRun;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * The compacted cache of the protocol (seed 42) read by its 128 test queries, two ways with the same sizes:
 * the biased path softmax(q·C_kᵀ/√d + β)·C_v, and the folded cache through the plain no-bias path
 * softmax(q·K_hᵀ/√d)·C_v'. Both on the CPU backend's fp64 attention. Run:
 * {@code mvn -q test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=org.mechspec.bench.FoldBiasBench}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class FoldBiasBench {
    private AttentionShape shape;
    private double[] queries;
    private double[] compactKeys;
    private double[] compactValues;
    private double[] beta;
    private double[] foldedKeys;
    private double[] refitValues;

    @Setup
    public void setup() {
        FoldBiasConfig c = FoldBiasConfig.PROTOCOL;
        FoldBiasInputs inputs = FoldBiasInputs.draw(c, 42);
        FoldBiasRun run = new FoldBias(CpuBackend.INSTANCE).run(inputs);
        shape = AttentionShape.of(1, 1, 1, c.testQueries(), run.size(), c.d(), c.d(), false);
        queries = inputs.testQueries();
        compactKeys = run.compaction().compactKeys();
        compactValues = run.compaction().compactValues();
        beta = run.compaction().beta();
        foldedKeys = run.fold().roundedKeys();
        refitValues = run.fold().refitValues();
    }

    @Benchmark
    public double[] biasedPath() {
        return CpuBackend.INSTANCE.attention(shape, queries, compactKeys, compactValues, beta);
    }

    @Benchmark
    public double[] foldedPlainPath() {
        return CpuBackend.INSTANCE.attention(shape, queries, foldedKeys, refitValues, null);
    }

    public static void main(String[] args) throws RunnerException {
        forkWithThisClasspath();
        Options options = new OptionsBuilder()
                .include(FoldBiasBench.class.getName() + "\\.")
                .forks(Integer.getInteger("jmh.forks", 1))
                .build();
        Collection<RunResult> results = new Runner(options).run();
        double biased = Double.NaN;
        double folded = Double.NaN;
        for (RunResult r : results) {
            double score = r.getPrimaryResult().getScore();
            if (r.getParams().getBenchmark().endsWith("biasedPath")) {
                biased = score;
            } else {
                folded = score;
            }
        }
        System.out.printf("fold-bias: folded plain path %.2f us, biased path %.2f us, ratio folded/biased = %.3f%n",
                folded, biased, folded / biased);
    }

    /** Under exec:java the JVM's class path is Maven's launcher; the forked benchmark JVM needs the test class path. */
    private static void forkWithThisClasspath() {
        if (Thread.currentThread().getContextClassLoader() instanceof java.net.URLClassLoader loader) {
            StringBuilder cp = new StringBuilder();
            for (java.net.URL url : loader.getURLs()) {
                if (cp.length() > 0) {
                    cp.append(java.io.File.pathSeparatorChar);
                }
                cp.append(new java.io.File(url.getPath()).getPath());
            }
            System.setProperty("java.class.path", cp.toString());
        }
    }
}
