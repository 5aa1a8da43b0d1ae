package org.mechspec.bench;

import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.mechspec.compute.Rng;
import org.mechspec.model.Batch;
import org.mechspec.model.Checkpoint;
import org.mechspec.model.Matmul;
import org.mechspec.model.Precision;
import org.mechspec.model.Qwen2Config;
import org.mechspec.model.Qwen2Model;
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
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Speed of the small model on the CPU (fp32, one thread): forward+backward of one training batch of the fixture's
 * config, and the blocked matmul against the textbook triple loop on a projection-sized product.
 * Run: {@code mvn -q test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=org.mechspec.bench.ModelBench}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class ModelBench {
    static final Path FIXTURE_CONFIG = Checkpoint.tinyQwen2().resolve(Checkpoint.CONFIG_FILE);
    /** Sequences of the fixture's training length per benchmarked batch. */
    static final int BATCH = 8;
    /** A q_proj-sized product over one batch: [512 tokens, 128] · [128, 256]. */
    static final int M = 512;
    static final int K = 128;
    static final int N = 256;

    Qwen2Model model;
    Batch batch;
    org.mechspec.model.Tensor a;
    org.mechspec.model.Tensor b;
    org.mechspec.model.Tensor c;
    float[] naiveC;

    @Setup
    public void setup() {
        Qwen2Config config = fixtureConfig();
        Rng rng = new Rng(1);
        model = Qwen2Model.initialized(config, Precision.FP32, rng, Qwen2Model.INIT_STD);
        int seq = config.maxPositionEmbeddings();
        int[] in = new int[BATCH * seq];
        int[] tg = new int[BATCH * seq];
        for (int i = 0; i < in.length; i++) {
            in[i] = (int) (rng.uniform() * 256);
            tg[i] = (int) (rng.uniform() * 256);
        }
        batch = new Batch(in, tg, BATCH, seq);
        a = org.mechspec.model.Tensor.of(Precision.FP32, rng.normals(M * K, 0, 1), M, K);
        b = org.mechspec.model.Tensor.of(Precision.FP32, rng.normals(K * N, 0, 1), K, N);
        c = org.mechspec.model.Tensor.zeros(Precision.FP32, M, N);
        naiveC = new float[M * N];
    }

    static Qwen2Config fixtureConfig() {
        if (Files.isRegularFile(FIXTURE_CONFIG)) {
            return Qwen2Config.read(FIXTURE_CONFIG);
        }
        return new Qwen2Config(256, 128, 256, 6, 4, 2, 64, 10000.0, 1e-6, true); // Pretrain's defaults
    }

    @Benchmark
    public double forwardBackward() {
        model.zeroGrad();
        var pass = model.forward(batch);
        pass.backward();
        return pass.logits().get(0);
    }

    @Benchmark
    public float matmulBlocked() {
        Matmul.accumulate(c, a, b, M, K, N);
        return (float) c.get(0);
    }

    @Benchmark
    public float matmulNaive() {
        Matmul.naive(naiveC, ((org.mechspec.model.Tensor.F32) a).data, ((org.mechspec.model.Tensor.F32) b).data, M, K, N);
        return naiveC[0];
    }

    public static void main(String[] args) throws RunnerException {
        exposeClasspathToForks();
        Collection<RunResult> results = new Runner(new OptionsBuilder().include(ModelBench.class.getName()).build()).run();
        double tokensPerBatch = (double) BATCH * fixtureConfig().maxPositionEmbeddings();
        double blocked = 0;
        double naive = 0;
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark();
            double opsPerSecond = r.getPrimaryResult().getScore();
            if (name.endsWith("forwardBackward")) {
                System.out.printf("forward+backward: %.0f tokens/s%n", opsPerSecond * tokensPerBatch);
            } else if (name.endsWith("matmulBlocked")) {
                blocked = opsPerSecond * 2.0 * M * K * N / 1e9;
            } else if (name.endsWith("matmulNaive")) {
                naive = opsPerSecond * 2.0 * M * K * N / 1e9;
            }
        }
        System.out.printf("matmul %dx%dx%d: blocked %.2f GFLOP/s, naive %.2f GFLOP/s, ratio %.2f%n", M, K, N, blocked,
                naive, blocked / naive);
    }

    /**
     * Under {@code exec:java} the classes live in a class loader, not on java.class.path, which is what JMH gives
     * its forked JVM; publish the loader's URLs there.
     */
    static void exposeClasspathToForks() {
        if (Thread.currentThread().getContextClassLoader() instanceof URLClassLoader loader) {
            StringBuilder cp = new StringBuilder();
            for (URL url : loader.getURLs()) {
                try {
                    cp.append(cp.length() == 0 ? "" : File.pathSeparator).append(Path.of(url.toURI()));
                } catch (URISyntaxException e) {
                    throw new IllegalStateException("unusable classpath entry " + url, e);
                }
            }
            System.setProperty("java.class.path", cp.toString());
        }
    }
}
