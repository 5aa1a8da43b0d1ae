package org.mechspec.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.mechspec.compute.Rng;
import org.mechspec.data.TokenBlocks;
import org.mechspec.data.DataFiles;
import org.mechspec.data.WikiText2;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Pretrains the project's small Qwen2 model on the WikiText-2 validation split (byte tokens) and writes
 * {@code config.json}, {@code model.safetensors} and {@code training.json} (seed, data SHA-256, hyper-parameters,
 * loss curve, test and unigram perplexity) to the output folder. Deterministic: the same arguments give
 * byte-identical weights and a byte-identical {@code training.json} for any {@code -Dmechspec.threads} (the OAL
 * manifest pins its SHA-256). What a rerun does not reproduce (wall times, threads, the JVM and machine) goes to
 * {@code training-log.json} beside it, which nothing pins.
 *
 * <p>Rng(seed) draws, in this order: the initial weights ({@link Qwen2Model#initialized}), then one Fisher–Yates
 * shuffle of the training blocks per epoch. Step s trains on the next {@code batch} blocks of the current order.
 */
@Command(name = "pretrain", mixinStandardHelpOptions = true,
        description = "Pretrain the tiny Qwen2 fixture on WikiText-2 (validation split) and evaluate it on the test split.")
public final class Pretrain implements Callable<Integer> {
    static final String RECORD_FILE = "training.json";
    /** The run's log: wall times and the machine, which differ on every rerun. Not pinned. */
    static final String LOG_FILE = "training-log.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--data-dir", description = "folder holding wikitext-2/ (default: -Dmechspec.data.dir or ../shared/data)")
    Path dataDir;
    @Option(names = "--out", defaultValue = "fixtures/checkpoints/tiny-qwen2", description = "output folder")
    Path out;
    @Option(names = "--seed", defaultValue = "20240607")
    long seed;
    @Option(names = "--steps", defaultValue = "200")
    int steps;
    @Option(names = "--batch", defaultValue = "32", description = "blocks per step")
    int batch;
    @Option(names = "--block", defaultValue = "65", description = "block length in bytes (seq len + 1)")
    int blockLength;
    @Option(names = "--hidden", defaultValue = "128")
    int hidden;
    @Option(names = "--intermediate", defaultValue = "256")
    int intermediate;
    @Option(names = "--layers", defaultValue = "6")
    int layers;
    @Option(names = "--heads", defaultValue = "4")
    int heads;
    @Option(names = "--kv-heads", defaultValue = "2")
    int kvHeads;
    @Option(names = "--lr", defaultValue = "3e-3", description = "peak learning rate")
    double lr;
    @Option(names = "--min-lr", defaultValue = "3e-4", description = "learning rate at the last step (cosine)")
    double minLr;
    @Option(names = "--warmup", defaultValue = "20", description = "linear warm-up steps")
    int warmup;
    @Option(names = "--weight-decay", defaultValue = "0.0")
    double weightDecay;
    @Option(names = "--clip", defaultValue = "1.0", description = "global gradient-norm clip")
    double clip;
    @Option(names = "--eval-blocks", defaultValue = "0", description = "test blocks to evaluate (0 = the whole split)")
    int evalBlocks;
    @Option(names = "--ci-blocks", defaultValue = "8", description = "test blocks of the quick check the CI repeats")
    int ciBlocks;
    @Option(names = "--log-every", defaultValue = "10")
    int logEvery;

    public static void main(String[] args) {
        System.exit(new CommandLine(new Pretrain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (dataDir != null) {
            System.setProperty("mechspec.data.dir", dataDir.toString());
        } else if (System.getProperty("mechspec.data.dir", "").isBlank()) {
            System.setProperty("mechspec.data.dir", "../shared/data");
        }
        byte[] trainBytes = WikiText2.VALIDATION.bytes();
        byte[] testBytes = WikiText2.TEST.bytes();
        Qwen2Config config = new Qwen2Config(256, hidden, intermediate, layers, heads, kvHeads, blockLength - 1,
                10000.0, 1e-6, true);
        TokenBlocks train = TokenBlocks.ofBytes(trainBytes, blockLength);
        TokenBlocks test = TokenBlocks.ofBytes(testBytes, blockLength);

        long started = System.nanoTime();
        Rng rng = new Rng(seed);
        Qwen2Model model = Qwen2Model.initialized(config, Precision.FP32, rng, Qwen2Model.INIT_STD);
        AdamW optimizer = new AdamW(model.trainableParameters(), 0.9, 0.95, 1e-8, weightDecay);
        ArrayNode curve = JSON.createArrayNode();
        int[] order = train.shuffledOrder(rng);
        int cursor = 0;
        int epochs = 1;
        double windowSum = 0;
        for (int step = 1; step <= steps; step++) {
            if (cursor + batch > order.length) {
                order = train.shuffledOrder(rng);
                cursor = 0;
                epochs++;
            }
            int[] chosen = new int[batch];
            System.arraycopy(order, cursor, chosen, 0, batch);
            cursor += batch;
            model.zeroGrad();
            ForwardPass pass = model.forward(Batch.nextToken(train.blocks(chosen), blockLength));
            double loss = pass.loss();
            pass.backward();
            double norm = AdamW.clipGlobalNorm(model.trainableParameters(), clip);
            optimizer.step(learningRate(step));
            windowSum += loss;
            if (step % logEvery == 0 || step == steps) {
                int span = step % logEvery == 0 ? logEvery : step % logEvery;
                ObjectNode point = curve.addObject();
                point.put("step", step);
                point.put("mean_loss", windowSum / span);
                windowSum = 0;
                System.out.printf("step %d/%d  loss %.4f  grad norm %.3f  lr %.2e  %.0f s%n", step, steps,
                        point.get("mean_loss").doubleValue(), norm, learningRate(step), seconds(started));
            }
        }
        double trainSeconds = seconds(started);

        Files.createDirectories(out);
        Checkpoint.save(model, out, DType.F32);
        Qwen2Model stored = Checkpoint.load(out, Precision.FP32);

        long evalStarted = System.nanoTime();
        int[] evalIndices = evalBlocks <= 0 ? Evaluation.allBlocks(test.count())
                : Evaluation.evenlySpaced(test.count(), evalBlocks);
        double[] nll = Evaluation.tokenNll(stored, test, evalIndices, 64);
        UnigramByteModel unigram = UnigramByteModel.fit(trainBytes);
        double[] unigramNll = unigram.tokenNll(test, evalIndices);
        int[] ciIndices = Evaluation.evenlySpaced(test.count(), ciBlocks);
        double[] ciNll = Evaluation.tokenNll(stored, test, ciIndices, ciBlocks);
        double evalSeconds = seconds(evalStarted);

        ObjectNode record = record(config, trainBytes, train, test, curve, epochs, stored, evalIndices, nll, unigramNll,
                ciIndices, ciNll);
        SafeTensorsWriter.writeAtomically(out.resolve(RECORD_FILE), json(record));
        SafeTensorsWriter.writeAtomically(out.resolve(LOG_FILE), json(runLog(trainSeconds, evalSeconds)));
        System.out.printf("test perplexity %.4f, unigram %.4f, ratio %.4f; training %.0f s, evaluation %.0f s%n",
                Evaluation.perplexity(nll), Evaluation.perplexity(unigramNll),
                Evaluation.perplexity(nll) / Evaluation.perplexity(unigramNll), trainSeconds, evalSeconds);
        return 0;
    }

    /** Linear warm-up to the peak, then cosine decay to {@code minLr} at the last step. */
    double learningRate(int step) {
        if (step <= warmup) {
            return lr * step / warmup;
        }
        double progress = (double) (step - warmup) / Math.max(1, steps - warmup);
        return minLr + 0.5 * (lr - minLr) * (1 + StrictMath.cos(StrictMath.PI * progress));
    }

    /** The bytes Pretrain writes for a JSON file: Jackson's default pretty printer and a final newline. */
    static byte[] json(ObjectNode node) throws java.io.IOException {
        return (JSON.writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The reproducible record ({@value #RECORD_FILE}): only what the arguments, the data and the deterministic
     * training determine, so a rerun writes it byte for byte again. Wall times, threads and the JVM are in
     * {@link #runLog}. Reads the checkpoint files already written to {@code out} for their hashes.
     */
    ObjectNode record(Qwen2Config config, byte[] trainBytes, TokenBlocks train, TokenBlocks test,
                      ArrayNode curve, int epochs, Qwen2Model model,
                      int[] evalIndices, double[] nll, double[] unigramNll, int[] ciIndices, double[] ciNll)
            throws java.io.IOException {
        ObjectNode r = JSON.createObjectNode();
        r.put("model", "tiny-qwen2");
        r.put("command", "org.mechspec.model.Pretrain");
        r.put("seed", seed);
        r.put("rng_order", "Rng(seed): initial weights (Hugging Face parameter order, row-major), then one "
                + "Fisher-Yates shuffle of the training blocks per epoch");
        ObjectNode data = r.putObject("data");
        data.put("dataset", WikiText2.DATASET_ID);
        data.put("train_file", WikiText2.VALIDATION.relativePath());
        data.put("train_sha256", DataFiles.sha256(trainBytes));
        data.put("train_bytes", trainBytes.length);
        data.put("train_blocks", train.count());
        data.put("test_file", WikiText2.TEST.relativePath());
        data.put("test_sha256", WikiText2.TEST.sha256());
        data.put("test_blocks", test.count());
        data.put("block_length", blockLength);
        data.put("tokenizer", "bytes (vocab 256)");
        ObjectNode hp = r.putObject("training");
        hp.put("steps", steps);
        hp.put("batch_blocks", batch);
        hp.put("tokens_per_step", batch * (blockLength - 1));
        hp.put("tokens_seen", (long) steps * batch * (blockLength - 1));
        hp.put("epochs_started", epochs);
        hp.put("optimizer", "AdamW beta1 0.9, beta2 0.95, eps 1e-8");
        hp.put("weight_decay", weightDecay);
        hp.put("peak_lr", lr);
        hp.put("min_lr", minLr);
        hp.put("warmup_steps", warmup);
        hp.put("schedule", "linear warm-up, cosine decay to min_lr at the last step");
        hp.put("grad_clip_global_norm", clip);
        hp.put("init_std", Qwen2Model.INIT_STD);
        hp.put("precision", "fp32");
        hp.set("loss_curve", curve);
        long params = 0;
        for (Parameter p : model.parameters()) {
            params += p.value().size();
        }
        ObjectNode ck = r.putObject("checkpoint");
        ck.put("parameters", params);
        ck.put("dtype", "F32");
        ck.put("model_safetensors_sha256", DataFiles.sha256(Files.readAllBytes(out.resolve(Checkpoint.WEIGHTS_FILE))));
        ck.put("model_safetensors_bytes", Files.size(out.resolve(Checkpoint.WEIGHTS_FILE)));
        ck.put("config_sha256", DataFiles.sha256(Files.readAllBytes(out.resolve(Checkpoint.CONFIG_FILE))));
        ObjectNode ev = r.putObject("evaluation");
        ev.put("split", WikiText2.TEST.relativePath());
        ev.put("blocks", evalIndices.length == test.count() ? "all" : "evenly spaced");
        ev.put("block_count", evalIndices.length);
        ev.put("predicted_tokens", nll.length);
        ev.put("what", "per-byte NLL of bytes 1..L-1 of each block given the bytes before it; mean over all predictions");
        ev.put("test_nll", Evaluation.meanNll(nll));
        ev.put("test_perplexity", Evaluation.perplexity(nll));
        ev.put("unigram", "byte unigram fitted on the training split with add-one smoothing, same predictions");
        ev.put("unigram_perplexity", Evaluation.perplexity(unigramNll));
        ev.put("perplexity_ratio", Evaluation.perplexity(nll) / Evaluation.perplexity(unigramNll));
        ObjectNode ci = r.putObject("ci_check");
        ci.put("what", "the quick evaluation the fixture contract repeats: these test blocks in one forward pass");
        ArrayNode idx = ci.putArray("test_block_indices");
        for (int i : ciIndices) {
            idx.add(i);
        }
        ci.put("predicted_tokens", ciNll.length);
        ci.put("test_nll", Evaluation.meanNll(ciNll));
        ci.put("test_perplexity", Evaluation.perplexity(ciNll));
        return r;
    }

    /** The run's log ({@value #LOG_FILE}): what differs from run to run and machine to machine. */
    static ObjectNode runLog(double trainSeconds, double evalSeconds) {
        ObjectNode r = JSON.createObjectNode();
        r.put("model", "tiny-qwen2");
        r.put("what", "this run's wall times and machine; " + RECORD_FILE + " beside it is the reproducible record");
        r.putObject("training").put("wall_time_seconds", trainSeconds).put("threads", Parallel.threads());
        r.putObject("evaluation").put("wall_time_seconds", evalSeconds);
        r.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        r.put("machine", System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", "
                + Runtime.getRuntime().availableProcessors() + " processors");
        return r;
    }

    private static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

}
