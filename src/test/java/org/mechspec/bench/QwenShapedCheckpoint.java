package org.mechspec.bench;

import java.nio.file.Path;
import org.mechspec.model.RandomQwenCheckpoint;

/**
 * Writes a random-weight checkpoint folder of Qwen2.5-0.5B's exact shape (24 layers, hidden 896, 14 / 2 heads of
 * dim 64, intermediate 4864, vocab 151936; bf16, about 1 GB) to measure the OAL checkpoint protocol's wall time and
 * memory without the real weights (README: Run OAL on Qwen2.5-0.5B). Its config.json has the real keys and values but
 * not the real bytes, so the run treats it as unpinned. Never commit the folder.
 *
 * <p>args: the folder to write. Needs about 3 GB of heap.
 */
public final class QwenShapedCheckpoint {
    private QwenShapedCheckpoint() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: QwenShapedCheckpoint DIR");
        }
        Path dir = RandomQwenCheckpoint.write(Path.of(args[0]), RandomQwenCheckpoint.QWEN25_05B, 20261201);
        System.out.println("wrote " + dir);
    }
}
