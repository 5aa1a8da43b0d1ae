package org.mechspec.bench;

import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CpuBackend;
import org.mechspec.pnmix.PnMixExperiment;
import org.mechspec.worker.Implementation;
import org.mechspec.worker.WorkerBackend;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * What judging an outside implementation costs: one worker call (fp16 rounding of one number: the protocol's
 * round trip, tensors through memory-backed files) against the same operation in mechspec's CPU backend, and the pn-mix
 * seeded protocol (seed 42: the pinned run, 8 random masks and the uniform baseline) with the NumPy reference worker
 * serving every operation against mechspec's own CPU run, both in this run. {@link #main} prints the ratios.
 * Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=org.mechspec.bench.WorkerBench
 * -Dmechspec.data.dir=../shared/data}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
public class WorkerBench {
    private static final String REFERENCE = "python3 " + Path.of("src/main/worker/python/reference_worker.py").toAbsolutePath();
    private final double[] one = {1.0 / 3};
    private Backend worker;

    @Setup(Level.Trial)
    public void start() {
        System.setProperty(Implementation.PROPERTY, REFERENCE);
        worker = new WorkerBackend(Implementation.current());
    }

    @TearDown(Level.Trial)
    public void stop() {
        Implementation.closeCurrent();
    }

    @Benchmark
    @Warmup(iterations = 2, time = 1)
    @Measurement(iterations = 3, time = 2)
    public double[] callWorker() {
        return worker.roundToHalf(one);
    }

    @Benchmark
    @Warmup(iterations = 2, time = 1)
    @Measurement(iterations = 3, time = 2)
    public double[] callCpu() {
        return CpuBackend.INSTANCE.roundToHalf(one);
    }

    @Benchmark
    @Warmup(iterations = 1, time = 1)
    @Measurement(iterations = 3, time = 1)
    public PnMixExperiment pnMixProtocolWorker() {
        return PnMixExperiment.run(42, worker);
    }

    @Benchmark
    @Warmup(iterations = 1, time = 1)
    @Measurement(iterations = 3, time = 1)
    public PnMixExperiment pnMixProtocolCpu() {
        return PnMixExperiment.run(42, CpuBackend.INSTANCE);
    }

    public static void main(String[] args) throws Exception {
        // In this JVM by default (-Djmh.forks=1 to fork): exec:java leaves no class path a forked JVM could start from.
        var results = new Runner(new OptionsBuilder().include(WorkerBench.class.getSimpleName()).forks(Integer.getInteger("jmh.forks", 0))
                .jvmArgsAppend("-Dmechspec.data.dir=" + System.getProperty("mechspec.data.dir", "../shared/data")).build()).run();
        double callWorker = 0, callCpu = 0, protocolWorker = 0, protocolCpu = 0;
        for (RunResult r : results) {
            double ms = r.getPrimaryResult().getScore();
            switch (r.getParams().getBenchmark().replaceAll(".*\\.", "")) {
                case "callWorker" -> callWorker = ms;
                case "callCpu" -> callCpu = ms;
                case "pnMixProtocolWorker" -> protocolWorker = ms;
                case "pnMixProtocolCpu" -> protocolCpu = ms;
                default -> { }
            }
        }
        System.setProperty(Implementation.PROPERTY, REFERENCE);
        Implementation counted = Implementation.current();
        PnMixExperiment.run(42, new WorkerBackend(counted));
        @SuppressWarnings("unchecked")
        long calls = ((java.util.Map<String, Long>) counted.provenance().get("calls")).values().stream().mapToLong(Long::longValue).sum();
        Implementation.closeCurrent();
        System.out.printf(Locale.ROOT, "worker calls in one pn-mix seeded protocol run: %d%n", calls);
        System.out.printf(Locale.ROOT, "one worker call: %.3f ms (CPU backend: %.5f ms); overhead %.3f ms per call%n", callWorker, callCpu,
                callWorker - callCpu);
        System.out.printf(Locale.ROOT, "pn-mix seeded protocol, seed 42: worker %.0f ms, CPU %.0f ms, ratio %.2f%n", protocolWorker, protocolCpu,
                protocolWorker / protocolCpu);
    }
}
